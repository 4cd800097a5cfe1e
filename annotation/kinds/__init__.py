"""Label Studio task kinds: one module per kind, each owning its config, tasks, validation and apply
(see :mod:`.base` for the interface). :data:`KINDS` is the registry the CLI's ``--kind`` choices,
push, pull, aggregate, agreement and apply all go through.

==============  ==============================  ===================================================
kind            module                          records (reader)
==============  ==============================  ===================================================
``tuple``       :mod:`.tuples`                  :class:`~biaskit.schema.BiasTuple` (``read_tuples``)
``sentence``    :mod:`.sentences`               :class:`~biaskit.schema.Sentence` (``read_sentences``)
``pair``        :mod:`.pairs`                   :class:`~biaskit.schema.SentencePair` (``read_pairs``)
``cat``         :mod:`.cats`                    :class:`~biaskit.schema.CAT` (``read_cats``)
``translation`` :mod:`.translation`             :class:`~biaskit.schema.TranslationCandidates`
``cat_translation`` :mod:`.cat_translation`     :class:`~biaskit.schema.CATTranslationCandidates`
==============  ==============================  ===================================================

Question names and labels of every kind are listed in ``docs/annotation.md``. To add a kind: write
``kinds/<name>.py`` with a :class:`TaskKind` subclass, register it below, and write its annotator
guidelines (``data/guidelines/<name>.en.md`` and ``.hi.md``). Edits in prefilled text areas
(``sentence``, ``pair``, ``translation``) are aggregated by :mod:`.edits`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from biaskit.registry import Registry

from .base import CHOICE, MULTI, TEXT, ApplyResult, ParsedConfig, Question, TaskKind, Votes, validate_config  # noqa: F401 (re-exported: the kinds and callers import them from here)

if TYPE_CHECKING:
    from ..judgment_options import ReportOptions

KINDS: Registry[type[TaskKind]] = Registry("annotation kind")
KINDS.register(
    "tuple",
    "biaskit.annotation.kinds.tuples:TupleKind",
    help="(identity, attribute) tuples: prevalent stereotype? yes/no, polarity, comment",
)
KINDS.register(
    "sentence",
    "biaskit.annotation.kinds.sentences:SentenceKind",
    help="LLM-generated sentences: keep / fix (correct it in place) / drop, problems, comment",
)
KINDS.register(
    "pair",
    "biaskit.annotation.kinds.pairs:PairKind",
    help="minimal pairs: stereo / antistereo / not a valid pair, concern codes, corrections in place, comment",
)
KINDS.register(
    "cat",
    "biaskit.annotation.kinds.cats:CatKind",
    help="StereoSet CATs: label each of the 3 associations stereotype / anti-stereotype / unrelated",
)
KINDS.register(
    "translation",
    "biaskit.annotation.kinds.translation:TranslationKind",
    help="blind review of candidate translations: pick A/B/.../none, correct the chosen S1/S2 in place",
)
KINDS.register(
    "cat_translation",
    "biaskit.annotation.kinds.cat_translation:CatTranslationKind",
    help="blind review of translated CATs: pick A/B/.../none, correct target, context (BLANK) and options in place",
)


def get_kind(name: str) -> TaskKind:
    """A fresh instance of the kind ``name`` (unknown names: "did you mean" error)."""
    return KINDS.get(name)()


def report_applied(opts: ReportOptions) -> dict | None:
    """``annotate report``: the kind's report on applied annotations, rebuilt from the records that were
    pushed (``opts.data``) and the files ``apply`` wrote (``opts.applied``) into ``opts.out``."""
    k = get_kind(opts.kind)
    return k.report(k.load(opts.data), opts.applied, opts.out)
