"""biaskit.curation (the `curation/` folder).

Importing it registers its LLM job runner with the floor (:data:`biaskit.llm_options.LLM_JOBS`, a lazy
entry): other stages run curation's tasks through it without importing curation (``annotate prelabel``).
"""

from biaskit.llm_options import LLM_JOBS

LLM_JOBS.register("runner", "biaskit.curation.jobs:JOBS", help="curation's JobRunner, tasks and prompts")
