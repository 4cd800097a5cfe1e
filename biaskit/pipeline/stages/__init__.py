"""One class per pipeline stage (see :mod:`.base`); :data:`STAGES` maps a stage name to its class, in
run order (:data:`biaskit.pipeline.project.STAGE_ORDER`)."""
from __future__ import annotations

from ..project import STAGE_ORDER
from .base import Context, Outcome, RunOptions, StageFailed, StageRunner, WORK_DIR  # noqa: F401
from .curation import AdaptStage, CheckStage, PairsStage, SentencesStage, TranslateStage, TuplesStage
from .publish import EvaluateStage, ReleaseStage
from .review import PairReviewStage, TranslationReviewStage, TupleReviewStage, progress_line, review_progress  # noqa: F401

STAGES: dict[str, type[StageRunner]] = {c.name: c for c in (
    TuplesStage, TupleReviewStage, SentencesStage, PairsStage, AdaptStage, CheckStage, PairReviewStage,
    TranslateStage, TranslationReviewStage, ReleaseStage, EvaluateStage)}
assert tuple(STAGES) == STAGE_ORDER, "every stage of STAGE_ORDER has one class, in the same order"
