"""One class per pipeline stage (see :mod:`.base`); :data:`STAGES` maps a stage name to its class, in
run order (:data:`biaskit.pipeline.project.STAGE_ORDER`)."""
from __future__ import annotations

from ..project import STAGE_ORDER
from .base import Context, Outcome, RunOptions, StageFailed, StageRunner, WORK_DIR  # noqa: F401
from .curation import (AdaptStage, AntistereoStage, CatsStage, CatTranslateStage, CheckStage, PairsStage,
                       SentencesStage, TranslateStage, TuplesStage)
from .publish import EvaluateStage, ReleaseStage, SeatTestsStage
from .review import (CatReviewStage, CatTranslationReviewStage, PairReviewStage, SentenceReviewStage,  # noqa: F401
                     TranslationReviewStage, TupleReviewStage, progress_line, review_progress)

STAGES: dict[str, type[StageRunner]] = {c.name: c for c in (
    TuplesStage, TupleReviewStage, SentencesStage, AntistereoStage, SentenceReviewStage, PairsStage, AdaptStage,
    CheckStage, PairReviewStage, TranslateStage, TranslationReviewStage, CatsStage, CatReviewStage,
    CatTranslateStage, CatTranslationReviewStage, ReleaseStage, SeatTestsStage, EvaluateStage)}
assert tuple(STAGES) == STAGE_ORDER, "every stage of STAGE_ORDER has one class, in the same order"
