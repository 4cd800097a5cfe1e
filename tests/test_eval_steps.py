"""The named steps the evaluate functions are made of (issue 30), each on inputs written here and
checked against numbers worked out by hand: ILPS group scores, group scores from a pairs.csv, the
typed results read from a summary, and a protocol's text naming an option where the user is."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest


def test_ilps_group_scores_are_the_means_of_each_set_by_hand():
    from biaskit.evaluation.ilps import group_scores

    rows = [
        # domain, group, set, ilps: "man" has A = (1 + 3) / 2 = 2, B = -1; "woman" A = 0.5, B = (2 + 4 + 6) / 3 = 4
        ("gender", "man", "A", 1.0),
        ("gender", "man", "A", 3.0),
        ("gender", "man", "B", -1.0),
        ("gender", "woman", "A", 0.5),
        ("gender", "woman", "B", 2.0),
        ("gender", "woman", "B", 4.0),
        ("gender", "woman", "B", 6.0),
    ]
    df = pd.DataFrame(rows, columns=["domain", "group", "set", "ilps"])
    got = {(r["group"], r["metric"]): (r["score"], r["count"]) for r in group_scores(df)}
    assert got == {
        ("man", "A"): (2.0, 3),
        ("man", "B"): (-1.0, 3),
        ("man", "A-B"): (3.0, 3),
        ("woman", "A"): (0.5, 4),
        ("woman", "B"): (4.0, 4),
        ("woman", "A-B"): (-3.5, 4),
    }


def test_group_scores_of_a_pairs_csv_with_groups_by_hand(tmp_path):
    from biaskit.evaluation.correlate import read_result_folder

    d = tmp_path / "res"
    d.mkdir()
    (d / "summary.json").write_text(json.dumps({"model": "/models/m1", "metric_score": 50.0}))
    # religion/hindu: wins 1, 0, 1 of 3 -> 66.67; religion/muslim: 0 of 1 -> 0; a pair without a group is left out
    pd.DataFrame(
        {
            "bias_type": ["religion", "religion", "religion", "religion", "religion"],
            "group_more": ["hindu", "hindu", "hindu", "muslim", None],
            "win": [True, False, True, False, True],
        }
    ).to_csv(d / "pairs.csv", index=False)
    f = read_result_folder(d)
    assert f.group_source == "group_more" and f.benchmark == "pairs" and f.names == ("/models/m1", "m1", "res")
    got = {(r.domain, r.group): (r.metric, r.score, r.count) for r in f.groups.itertuples()}
    assert got == {
        ("religion", "hindu"): ("pairs:metric_score", pytest.approx(200 / 3), 3),
        ("religion", "muslim"): ("pairs:metric_score", 0.0, 1),
    }


def _metrics(n: int, score: float) -> dict:
    return {
        "n_pairs": n,
        "metric_score": score,
        "stereo_score": score,
        "antistereo_score": None,
        "n_ties": 0,
        "uncertainty": {"ci_low": score - 5, "ci_high": score + 5},
        "subsample": {"mean": score, "std": 1.0},
    }


def test_a_pairs_model_reads_its_headline_from_the_summary():
    from biaskit.evaluation.results import PairsModel

    one = {"model": "m", "model_slug": "m", "scorer": "clm", **_metrics(4, 75.0), "by_lang": {"en": _metrics(4, 75.0)}}
    m = PairsModel.from_summary(one, Path("out"))
    assert [(r.lang, r.n_pairs, r.metric_score, r.ci_low) for r in m.rows()] == [("en", 4, 75.0, 70.0)]
    assert m.pooled is None and m.folder == Path("out") and m.summary is one
    both = {
        **one,
        **_metrics(8, 62.5),
        "pooled_over_langs": True,
        "by_lang": {"en": _metrics(4, 75.0), "hi": _metrics(4, 50.0)},
    }
    m = PairsModel.from_summary(both, Path("out"))
    assert [(r.lang, r.n_pairs, r.metric_score) for r in m.rows()] == [
        ("en", 4, 75.0),
        ("hi", 4, 50.0),
        ("all", 8, 62.5),
    ]
    assert m.metric_score == 62.5 and m.n_pairs == 8


def test_a_protocol_text_names_the_option_where_the_user_is():
    from biaskit.evaluation.options import PairsOptions
    from biaskit.evaluation.protocols.base import with_options

    from biaskit.options import Flags, Key, Keys, speaking

    text = "{option:unit=word-token} runs the literal reading; see {option:method}."
    with speaking(Flags(PairsOptions)):
        assert with_options(text) == "--unit word-token runs the literal reading; see --method."
    with speaking(Keys("biaskit.toml", {"unit": Key("stages.evaluate", "unit")}, default="stages.evaluate")):
        assert with_options(text) == (
            'unit = "word-token" in [stages.evaluate] of biaskit.toml runs the literal reading; '
            "see method in [stages.evaluate] of biaskit.toml."
        )
    assert with_options("no option here") == "no option here"
