"""``cat_intersentence``: StereoSet intersentence CATs for one target term (Nadeem et al., 2021,
sec. 2.2 and 4.2): a context sentence with the target, and a stereotype / anti-stereotype /
unrelated sentence to follow it.

Items and draft rows as for ``cat_intrasentence`` (:mod:`.cat_intrasentence`).
"""

from __future__ import annotations

from . import TASKS
from .cat_intrasentence import CatIntrasentenceTask


@TASKS.register("cat_intersentence")
class CatIntersentenceTask(CatIntrasentenceTask):
    name = "cat_intersentence"
    prompt_id = "cat_intersentence"
    split = "intersentence"
