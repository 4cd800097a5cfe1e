"""One class per pipeline stage (see :mod:`.base`): :data:`STAGES` lists them in run order, and
everything else about the stages is derived from the classes -- :data:`STAGE_ORDER`,
:data:`STAGE_IO` (what each reads and writes), :data:`HUMAN_STAGES`, and the project file's
``[stages]`` table (:mod:`biaskit.pipeline.project`)."""

from __future__ import annotations

from .base import WORK_DIR, Command, Context, Outcome, RunOptions, StageFailed, StageRunner, stage_table  # noqa: F401 (re-exported)
from .curation import (
    AdaptStage,
    AntistereoStage,
    CatsStage,
    CatTranslateStage,
    CheckStage,
    PairsStage,
    SentencesStage,
    TranslateStage,
    TuplesStage,
)
from .publish import EvaluateStage, ReleaseStage, SeatTestsStage
from .review import (
    CatReviewStage,
    CatTranslationReviewStage,
    PairReviewStage,
    SentenceReviewStage,
    TranslationReviewStage,
    TupleReviewStage,
    progress_line,  # noqa: F401 (the pipeline's names: tests import them from here)
    review_progress,  # noqa: F401 (the pipeline's names: tests import them from here)
)

# The stages, in the order `biaskit run` executes them (whatever the order of the tables in the file).
STAGES: dict[str, type[StageRunner]] = {
    c.name: c
    for c in (
        TuplesStage,
        TupleReviewStage,
        SentencesStage,
        AntistereoStage,
        SentenceReviewStage,
        PairsStage,
        AdaptStage,
        CheckStage,
        PairReviewStage,
        TranslateStage,
        TranslationReviewStage,
        CatsStage,
        CatReviewStage,
        CatTranslateStage,
        CatTranslationReviewStage,
        ReleaseStage,
        SeatTestsStage,
        EvaluateStage,
    )
}
STAGE_ORDER: tuple[str, ...] = tuple(STAGES)
HUMAN_STAGES: tuple[str, ...] = tuple(n for n, c in STAGES.items() if c.human)
# stage -> (artifact it reads, artifact it writes); None: reads a file given in its options only; a tuple:
# any one of these artifacts (the release reads pairs, CATs or both)
STAGE_IO: dict[str, tuple[str | tuple[str, ...] | None, str]] = {
    n: (None if not c.inputs else c.inputs[0] if len(c.inputs) == 1 else c.inputs, c.output) for n, c in STAGES.items()
}


def reads_of(stage: str) -> tuple[str, ...]:
    """The artifacts a stage can read (any one of them)."""
    return STAGES[stage].inputs
