"""One path from a curator's idea to a published release: ``biaskit init``, ``biaskit run``,
``biaskit status`` (docs/pipeline.md).

The pipeline sits above the stages, like the CLI root: it is the one package besides
``biaskit/cli.py`` that imports ``biaskit.curation``, ``biaskit.annotation`` and
``biaskit.evaluation``, and it calls their pure functions (never their commands).

- :mod:`.project`: the project file ``biaskit.toml`` (pydantic; errors name the file, key and fix;
  secrets refused), :func:`load_project`, :func:`init_project`;
- :mod:`.stages`: one class per stage, calling the stage's functions;
- :mod:`.state`: the state file (fingerprints, outputs), the run lock;
- :mod:`.run`: :func:`run_project` (skip, resume, wait for people);
- :mod:`.status`: :func:`project_status`;
- :mod:`.cli`: the three commands.

::

    from biaskit.pipeline import load_project, run_project, project_status
    from biaskit.pipeline.options import RunCommandOptions
    p = load_project("my-project")            # my-project/biaskit.toml
    res = run_project(p, RunCommandOptions()) # `biaskit run`'s options; res.status: done | waiting
    project_status(p)["stages"]
"""

from __future__ import annotations

from .project import STAGE_ORDER, Project, init_project, load_project
from .run import RunResult, run_project
from .status import project_status

__all__ = ["STAGE_ORDER", "Project", "init_project", "load_project", "RunResult", "run_project", "project_status"]
