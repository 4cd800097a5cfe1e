"""Every record reader biaskit has, next to the schema they produce (:mod:`biaskit.schema`).

Stages read their inputs only through these functions, so a file gives the same records and the same
ids (:mod:`biaskit.ids`) in curation, annotation, evaluation and releases.

==========================  ===========================================  =============================
reader                      formats                                      records
==========================  ===========================================  =============================
:func:`read_pairs`          CrowS-Pairs CSV, IndiBias CSV (en/hi views),  :class:`~biaskit.schema.SentencePair`
                            biaskit JSONL/CSV
:func:`read_tuples`         biaskit JSONL/CSV (``curate tuples``)         :class:`~biaskit.schema.BiasTuple`
:func:`read_sentences`      biaskit JSONL (``curate sentences``)          :class:`~biaskit.schema.Sentence`
:func:`read_cats`           StereoSet ``dev.json``, flattened JSONL,      :class:`~biaskit.schema.CAT`
                            biaskit CAT JSONL
:func:`read_candidates`     ``curate translate`` output                   :class:`~biaskit.schema.TranslationCandidates`
:func:`read_seat_test`      sent-bias SEAT/WEAT JSON                      :class:`~biaskit.readers.seat.SeatTest`
:func:`read_export`         Label Studio JSON export                      task dicts
:func:`read_judgments`      ``annotate pull`` CSV/JSONL                   DataFrame of judgments
==========================  ===========================================  =============================
"""

from ._common import UniqueIds, first_error, first_record, iter_rows, read_text, validation_error
from .cats import CAT_FORMATS, cat_rows, read_cats
from .judgments import read_judgments
from .labelstudio import annotation_values, annotator, read_export, read_users
from .pairs import FORMATS, ReadResult, detect_format, iter_pair_rows, iter_valid_pairs, read_pairs, write_pairs
from .records import read_candidates, read_cat_candidates, read_sentence_rows, read_sentences, read_tuples
from .seat import SeatSet, SeatTest, read_seat_test

__all__ = [
    "CAT_FORMATS",
    "FORMATS",
    "ReadResult",
    "SeatSet",
    "SeatTest",
    "UniqueIds",
    "annotation_values",
    "annotator",
    "cat_rows",
    "detect_format",
    "first_error",
    "first_record",
    "iter_pair_rows",
    "iter_rows",
    "iter_valid_pairs",
    "read_candidates",
    "read_cat_candidates",
    "read_cats",
    "read_export",
    "read_judgments",
    "read_pairs",
    "read_seat_test",
    "read_sentence_rows",
    "read_sentences",
    "read_text",
    "read_tuples",
    "read_users",
    "validation_error",
    "write_pairs",
]
