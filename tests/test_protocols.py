"""Paper protocols by name: every setting each one pins (a test per protocol fails when one drifts),
the default by the data's origin, deviations in words, and where they are recorded.

The expected settings below are written from the papers and the reference code (the section each
comes from is checked to be cited), not read from ``evaluation/protocols``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from biaskit.evaluation.protocols import PROTOCOLS, get_protocol
from conftest import run_cli

from biaskit.errors import BiaskitError

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo" / "demo_pairs.jsonl"


def settings(name: str) -> set[tuple]:
    """(command or '', key, value, context) of every setting of a protocol."""
    p = get_protocol(name)
    return {
        (
            s.command,
            s.key,
            s.value if not isinstance(s.value, list) else tuple(s.value),
            tuple(sorted((k, v if not isinstance(v, list) else tuple(v)) for k, v in s.when.items())),
        )
        for s in p.settings
    }


def cites(name: str, key: str, *parts: str, when: dict | None = None) -> None:
    s = next(s for s in get_protocol(name).settings if s.key == key and (when is None or dict(s.when) == when))
    for part in parts:
        assert part in s.section, (name, key, part, s.section)


def test_crows_protocol_settings():
    # Nangia et al. 2020, reference metric.py: mask_unigram (P(U|M), token by token, summed); evaluate()
    # rounds both scores to 3 decimals (equal = neutral); masked LMs only (bert, roberta, albert)
    assert settings("crows") == {
        ("", "method", "pll", (("kind", "mlm"),)),
        ("", "unit", "token", (("kind", "mlm"),)),
        ("", "normalise", "none", (("kind", "mlm"),)),
        ("", "decimals", 3, ()),
    }
    for key in ("method", "unit", "normalise"):
        cites("crows", key, "metric.py", "mask_unigram")
    cites("crows", "decimals", "metric.py", "3 decimals")
    assert dict(get_protocol("crows").scope)["kind"][0] == ("mlm",)
    assert get_protocol("crows").commands == ("pairs",)


def test_indibias_protocol_settings():
    # Sahoo et al. 2024 §6.1: P(U|M) for encoders, word-level masking, normalised by |C|; decoder and
    # seq2seq models: the normalised (per-token mean) sentence log-probability. Table 2: 5 runs x 80%.
    assert settings("indibias") == {
        ("", "method", "pll", (("kind", "mlm"),)),
        ("", "unit", "word", (("kind", "mlm"),)),
        ("", "normalise", "unmodified", (("kind", "mlm"),)),
        ("", "method", "mean", (("kind", ("clm", "seq2seq")),)),
        ("", "runs", 5, ()),
        ("", "fraction", 0.8, ()),
    }
    for key in ("unit", "normalise"):
        cites("indibias", key, "IndiBias §6.1")
    cites("indibias", "method", "IndiBias §6.1", when={"kind": "mlm"})
    cites("indibias", "method", "IndiBias §6.1", when={"kind": ("clm", "seq2seq")})
    cites("indibias", "runs", "Table 2")
    cites("indibias", "fraction", "Table 2", "80%")
    assert get_protocol("indibias").figures == ("indibias2024:table2",)


def test_indibias_seat_protocol_settings():
    # Appendix B: [CLS] embedding of bleached sentences (May et al.); Tables 3, 4, 9: underlined at p = 0.01.
    # A decoder has no [CLS]: the paper's pooling covers encoders (and mT5/mBART's encoder), a decoder is
    # outside the paper's setup (its scope)
    assert settings("indibias-seat") == {
        ("", "pooling", "cls", (("family", ("encoder", "encoder-decoder")),)),
        ("", "bleach", "auto", ()),
        ("", "alpha", 0.01, ()),
        ("", "correction", "none", ()),
        ("", "marks", "underline", ()),
    }
    cites("indibias-seat", "pooling", "Appendix B", "[CLS]")
    assert dict(get_protocol("indibias-seat").scope)["family"][0] == ("encoder", "encoder-decoder")
    cites("indibias-seat", "alpha", "Tables 3, 4, 9", "0.01")
    cites("indibias-seat", "marks", "underlined")


def test_seat_may2019_protocol_settings():
    # sent-bias: encoders/bert.py (word pieces without [CLS]/[SEP], position 0 of the last layer); README: GPT
    # via jiant combine_method = last; main.py: examples as written, --n_samples 100000, --seed 1111;
    # scripts/print_table.py: * at p <= 0.01, ** after Holm-Bonferroni
    assert settings("seat-may2019") == {
        ("", "pooling", "first", (("family", "encoder"),)),
        ("", "pooling", "last", (("family", "decoder"),)),
        ("", "bleach", "never", ()),
        ("", "n_samples", 100_000, ()),
        ("", "seed", 1111, ()),
        ("", "alpha", 0.01, ()),
        ("", "correction", "holm-bonferroni", ()),
        ("", "marks", "star", ()),
    }
    cites("seat-may2019", "pooling", "encoders/bert.py", when={"family": "encoder"})
    cites("seat-may2019", "pooling", "combine_method = last", when={"family": "decoder"})
    cites("seat-may2019", "n_samples", "main.py")
    cites("seat-may2019", "alpha", "print_table.py")
    cites("seat-may2019", "correction", "holm_bonferroni")


def test_stereoset_protocol_settings():
    # likelihood scoring (ACL 2021 Table 4; the arXiv 2020 version scores only so); the mean of the
    # piece probabilities (ACL §6.1, eval_discriminative_models.py); ties as code/evaluation.py;
    # intersentence by an NSP head for every model (arXiv §7.1-7.4, A.4; models.py ModelNSP)
    assert settings("stereoset") == {
        ("", "mode", "likelihood", ()),
        ("", "piece_agg", "mean-prob", (("kind", "mlm"),)),
        ("", "tie_policy", "reference", ()),
        ("", "intersentence", "nsp", ()),
    }
    cites("stereoset", "mode", "Table 4")
    cites("stereoset", "piece_agg", "§6.1", "eval_discriminative_models.py")
    cites("stereoset", "tie_policy", "evaluation.py")
    cites("stereoset", "intersentence", "A.4", "ModelNSP")
    assert get_protocol("stereoset").figures == ("stereoset2020:table4", "stereoset2020:table7")


def test_cao2022_protocol_settings():
    # §2: CEAT, ILPS, StereoSet (intrasentence only, pseudo log-likelihood); §3: Pearson across models over the
    # variance of group scores; §4.1: all groups of each dataset; CEAT N = 10000 (reference README); ILPS per
    # group predicts the attribute (§2)
    assert settings("cao2022") == {
        ("correlate", "correlation", "pearson", ()),
        ("correlate", "groups", "all", ()),
        ("correlate", "metrics", ("ceat", "ilps", "stereoset"), ()),
        ("cats", "split", "intrasentence", ()),
        ("cats", "mode", "pll", ()),
        ("ceat", "n_samples", 10_000, ()),
        ("ilps", "predict", "attribute", ()),
    }
    cites("cao2022", "correlation", "§3", "Pearson")
    cites("cao2022", "split", "§2")
    cites("cao2022", "mode", "§2", "pseudo")
    cites("cao2022", "groups", "§4.1")


def test_the_registry_and_the_floors_names_agree():
    from biaskit.origin import PROTOCOL_NAMES

    assert tuple(PROTOCOLS.names()) == PROTOCOL_NAMES
    with pytest.raises(Exception, match="did you mean|Did you mean"):
        PROTOCOLS.get("indibais")


# ---------------------------------------------------------------------------------------------- pairs
@pytest.fixture
def ib_csv(tmp_path) -> Path:
    """A small IndiBias-format CSV (the columns of IndiBias_v1_sample.csv, written here)."""
    import pandas as pd

    rows = []
    for i, (a, b, ha, hb) in enumerate(
        [
            (
                "Brahmins are always well educated.",
                "Dalits are always well educated.",
                "ब्राह्मण हमेशा पढ़े लिखे होते हैं।",
                "दलित हमेशा पढ़े लिखे होते हैं।",
            ),
            (
                "The poor man could not pay the rent.",
                "The rich man could not pay the rent.",
                "गरीब आदमी किराया नहीं दे सका।",
                "अमीर आदमी किराया नहीं दे सका।",
            ),
            (
                "Women are bad at driving.",
                "Men are bad at driving.",
                "महिलाएं गाड़ी चलाने में खराब हैं।",
                "पुरुष गाड़ी चलाने में खराब हैं।",
            ),
        ]
    ):
        rows.append(
            {
                "index": i,
                "modified_eng_sent_more": a,
                "modified_eng_sent_less": b,
                "sent_more_hindi": ha,
                "sent_less_hindi": hb,
                "stereo_antistereo": "stereo",
                "bias_type": "caste" if i == 0 else "socioeconomic" if i == 1 else "gender",
            }
        )
    p = tmp_path / "ib.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    return p


def test_pairs_default_is_the_datas_protocol(ib_csv, tiny_gpt2, tiny_xlmr, tmp_path):
    from biaskit.evaluation.options import PairsOptions
    from biaskit.evaluation.pairs import run_pairs

    # an IndiBias file: the indibias protocol, for a masked LM word masking and |C|, for a causal LM the mean
    r = run_pairs(
        PairsOptions(data=ib_csv, models=[tiny_xlmr], scorer="mlm", out=tmp_path / "m"), progress=False, cache=False
    )
    s = r.models[0].summary
    assert s["protocol"]["name"] == "indibias" and s["protocol"]["follows_protocol"]
    # ... but a tiny file and a random model are not the paper's data and checkpoint: not comparable
    kinds = {w["kind"] for w in s["protocol"]["why_not_comparable"]}
    assert not s["protocol"]["comparable"] and kinds == {"data", "checkpoint"}
    assert (s["unit"], s["method"], s["normalise"]) == ("word", "pll", "unmodified")
    assert s["subsample"]["runs"] == 5 and s["subsample"]["fraction"] == 0.8
    r = run_pairs(
        PairsOptions(data=ib_csv, models=[tiny_gpt2], scorer="clm", out=tmp_path / "c"), progress=False, cache=False
    )
    assert r.models[0].summary["method"] == "mean" and r.protocol.follows_protocol
    # an explicit option overrides it and is a deviation in words, recorded and reported
    r = run_pairs(
        PairsOptions(data=ib_csv, models=[tiny_gpt2], scorer="clm", method="sum", out=tmp_path / "d"),
        progress=False,
        cache=False,
    )
    s = r.models[0].summary
    assert s["method"] == "sum" and not s["protocol"]["comparable"] and not s["protocol"]["follows_protocol"]
    [dev] = s["protocol"]["deviations"]
    assert dev["text"].startswith("the sum of the token log-probabilities instead of the per-token mean")
    assert "IndiBias §6.1" in dev["text"] and "--method sum" in dev["text"]
    report = (tmp_path / "d" / "report.md").read_text()
    assert "## Protocol" in report and dev["text"] in report and "1 deviation(s)" in report
    # --protocol none: biaskit's own defaults, labelled as such
    r = run_pairs(
        PairsOptions(data=ib_csv, models=[tiny_gpt2], scorer="clm", protocol="none", out=tmp_path / "n"),
        progress=False,
        cache=False,
    )
    assert r.models[0].summary["method"] == "sum" and r.models[0].summary["protocol"]["name"] == "none"
    assert "not comparable" in (tmp_path / "n" / "report.md").read_text()


def test_crows_data_and_a_causal_lm_is_outside_the_paper(crows_csv, tiny_gpt2, tiny_bert, tmp_path):
    from biaskit.evaluation.options import PairsOptions
    from biaskit.evaluation.pairs import run_pairs

    r = run_pairs(
        PairsOptions(data=crows_csv, models=[tiny_bert], scorer="mlm", limit=4, out=tmp_path / "b"),
        progress=False,
        cache=False,
    )
    s = r.models[0].summary
    assert s["protocol"]["name"] == "crows" and s["protocol"]["follows_protocol"] and not s["protocol"]["comparable"]
    assert (s["unit"], s["method"], s["normalise"]) == ("token", "pll", "none")
    r = run_pairs(
        PairsOptions(data=crows_csv, models=[tiny_gpt2], scorer="clm", limit=4, out=tmp_path / "g"),
        progress=False,
        cache=False,
    )
    [dev] = r.models[0].summary["protocol"]["deviations"]
    assert "masked LMs only" in dev["text"]


def test_biaskit_records_of_unknown_origin_get_no_protocol(tiny_gpt2, tmp_path):
    from biaskit.evaluation.options import PairsOptions
    from biaskit.evaluation.pairs import run_pairs

    r = run_pairs(
        PairsOptions(data=DEMO, models=[tiny_gpt2], scorer="clm", limit=2, out=tmp_path / "o"),
        progress=False,
        cache=False,
    )
    p = r.models[0].summary["protocol"]
    assert p["name"] == "none" and "biaskit-demo" in p["chosen_by"]


def test_cli_prints_the_protocol_and_refuses_a_protocol_of_another_command(ib_csv, tiny_gpt2, tmp_path, capsys):
    code, out, err = run_cli(
        [
            "evaluate",
            "pairs",
            "--data",
            str(ib_csv),
            "--model",
            str(tiny_gpt2),
            "--scorer",
            "clm",
            "--method",
            "sum",
            "--out",
            str(tmp_path / "o"),
            "-q",
            "--no-cache",
        ],
        capsys,
    )
    assert code == 0, err
    assert "protocol indibias" in out and "deviation: the sum of the token log-probabilities" in out
    code, _, err = run_cli(
        [
            "evaluate",
            "pairs",
            "--data",
            str(ib_csv),
            "--model",
            str(tiny_gpt2),
            "--scorer",
            "clm",
            "--protocol",
            "stereoset",
            "--out",
            str(tmp_path / "x"),
        ],
        capsys,
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--protocol" in err and "indibias" in err
    code, _, err = run_cli(
        [
            "evaluate",
            "pairs",
            "--data",
            str(ib_csv),
            "--model",
            str(tiny_gpt2),
            "--scorer",
            "clm",
            "--unit",
            "word",
            "--out",
            str(tmp_path / "y"),
        ],
        capsys,
    )
    assert code == 2 and "Traceback" not in err


def test_release_records_its_protocol_and_evaluation_follows_it(ib_csv, tiny_gpt2, tmp_path):
    from biaskit.evaluation.options import PairsOptions
    from biaskit.evaluation.pairs import run_pairs

    from biaskit.readers import read_pairs, write_pairs
    from biaskit.release import BuildOptions, build_release

    recs = tmp_path / "recs.jsonl"
    write_pairs(recs, read_pairs(ib_csv).pairs)
    build_release(
        [recs],
        tmp_path / "rel",
        BuildOptions(
            name="ib", version="1.0.0", plots=False, keyness=False, created="2025-01-01", discover_history=False
        ),
    )
    meta = json.loads((tmp_path / "rel" / "release.json").read_text())
    assert meta["protocol"] == "indibias"
    assert "indibias" in (tmp_path / "rel" / "README.md").read_text()
    r = run_pairs(
        PairsOptions(data=tmp_path / "rel", models=[tiny_gpt2], scorer="clm", out=tmp_path / "o"),
        progress=False,
        cache=False,
    )
    p = r.models[0].summary["protocol"]
    assert p["name"] == "indibias" and "release.json" in p["chosen_by"] and r.models[0].summary["method"] == "mean"
    # a build option wins over the origin
    build_release(
        [recs],
        tmp_path / "rel2",
        BuildOptions(
            name="ib",
            version="1.0.1",
            plots=False,
            keyness=False,
            created="2025-01-01",
            discover_history=False,
            protocol="crows",
        ),
    )
    assert json.loads((tmp_path / "rel2" / "release.json").read_text())["protocol"] == "crows"


def test_project_file_takes_a_protocol(tmp_path):
    from biaskit.pipeline.stages import EvaluateStage

    assert EvaluateStage.table(models=["m"], protocol="IndiBias").protocol == "indibias"
    with pytest.raises(Exception, match="protocol"):
        EvaluateStage.table(models=["m"], protocol="indibais")


def test_choose_refuses_what_a_protocol_does_not_cover():
    from biaskit.evaluation.protocols import choose

    with pytest.raises(BiaskitError, match="does not cover"):
        choose("seat", "crows", None)
    p, how = choose("seat", "indibias-seat", None)
    assert p.name == "indibias-seat" and how == "--protocol"
