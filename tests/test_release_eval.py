"""The evaluators read a release folder directly (tiny real models from fixtures_models), and a CAT
release keeps StereoSet's layout. The summaries name the release, its version and the checksum of the
data file they scored."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from biaskit.evaluation.options import CatsOptions, PairsOptions
from conftest import run_cli

from biaskit.errors import InputError
from biaskit.release import BuildOptions, build_release, verify_release

DATE = "2025-01-01"


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def indibias_rel(tmp_path_factory):
    from conftest import public_dataset  # the cache, a mirror ($BIASKIT_DATA_MIRROR) or the download

    src = public_dataset("indibias-sample")
    out = tmp_path_factory.mktemp("rel") / "indibias"
    build_release(
        [src],
        out,
        BuildOptions(
            name="indibias-sample", version="1.2.3", created=DATE, skip_invalid=True, keyness=False, plots=False
        ),
    )
    return out


def test_evaluate_pairs_on_a_release_split_and_language(indibias_rel, tiny_gpt2, tmp_path, capsys):
    from biaskit.evaluation.pairs import run_pairs

    res = run_pairs(
        PairsOptions(
            data=indibias_rel,
            release_split="test",
            lang="hi",
            models=[tiny_gpt2],
            scorer="clm",
            out=tmp_path / "o",
            limit=4,
        ),
        progress=False,
    )
    s = json.loads((tmp_path / "o" / "summary.json").read_text(encoding="utf-8"))
    assert s["n_pairs"] == 4 and s["langs"] == ["hi"]
    rel = s["data"]["release"]
    assert (rel["release"], rel["version"], rel["split"], rel["lang"]) == ("indibias-sample", "1.2.3", "test", "hi")
    assert rel["file"] == "pairs.jsonl" and rel["sha256"] == _sha(indibias_rel / "pairs.jsonl") == s["data"]["sha256"]
    assert rel["sha256_matches_release"] is True
    # the scored pairs are the first four Hindi views of the test split, in file order
    recs = [json.loads(line) for line in (indibias_rel / "pairs.jsonl").read_text(encoding="utf-8").splitlines()]
    want = [r["views"]["hi"]["sent_more"] for r in recs if r["split"] == "test" and "hi" in r["views"]][:4]
    import pandas as pd

    got = list(pd.read_csv(tmp_path / "o" / "pairs.csv")["sent_more"])
    assert got == want and res.models[0].summary["n_pairs"] == 4
    # the CLI, as documented
    code, out, err = run_cli(
        [
            "evaluate",
            "pairs",
            "--data",
            str(indibias_rel),
            "--split",
            "dev",
            "--lang",
            "en",
            "--model",
            str(tiny_gpt2),
            "--scorer",
            "clm",
            "--limit",
            "3",
            "--runs",
            "1",
            "-q",
            "--out",
            str(tmp_path / "cli"),
        ],
        capsys,
    )
    assert code == 0, err
    s2 = json.loads((tmp_path / "cli" / "summary.json").read_text(encoding="utf-8"))
    assert s2["data"]["release"]["split"] == "dev" and "--split dev" in s2["command"]
    # errors: unknown split, a split on a plain file
    with pytest.raises(InputError, match="unknown split 'train'"):  # the Python keywords' one-line error
        PairsOptions.from_kwargs(data=indibias_rel, split="train", models=[tiny_gpt2], scorer="clm", out=tmp_path / "x")
    code, _, err = run_cli(
        [
            "evaluate",
            "pairs",
            "--data",
            str(indibias_rel / "pairs.jsonl"),
            "--split",
            "test",
            "--model",
            str(tiny_gpt2),
            "--scorer",
            "clm",
            "--out",
            str(tmp_path / "y"),
        ],
        capsys,
    )
    assert code == 2 and "not a folder" in err and len(err.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def cat_release(tmp_path_factory):
    from conftest import _stereoset_flat  # StereoSet dev (downloaded, or the mirror's flattened copy)

    src = _stereoset_flat()
    from biaskit.evaluation.stereoset import read_cats

    from biaskit.io import write_jsonl

    tmp = tmp_path_factory.mktemp("cats")
    cats = read_cats(src, split="intrasentence")[:300] + read_cats(src, split="intersentence")[:100]
    recs = write_jsonl(tmp / "cats.jsonl", cats)
    out = tmp / "rel"
    build_release(
        [recs],
        out,
        BuildOptions(name="stereoset-mini", version="0.1.0", created=DATE, plots=False, license="cc-by-sa-4.0"),
    )
    return cats, out


def test_cat_release_layout_splits_and_reader(cat_release, tmp_path, monkeypatch):
    from biaskit.evaluation.stereoset import read_cats

    cats, out = cat_release
    v = verify_release(out)
    assert v.ok, v.problems
    rel = json.loads((out / "release.json").read_text())
    assert rel["counts"]["cats"]["records"] == 400
    # StereoSet's original layout, read back by the StereoSet reader
    back = {sp: read_cats(out / "stereoset" / f"{sp}.json", format="stereoset") for sp in ("dev", "test")}
    assert sum(len(b) for b in back.values()) == 400
    by_id = {c.cat_id: c for c in cats}
    for bs in back.values():
        for c in bs:
            o = by_id[c.cat_id]
            assert (c.context, c.target, c.split) == (o.context, o.target, o.split)
            assert {x.gold_label: x.sentence for x in c.options} == {x.gold_label: x.sentence for x in o.options}
    # disjoint by target term (case-insensitive), recounted from the two files
    t_dev = {c.target.lower() for c in back["dev"]}
    t_test = {c.target.lower() for c in back["test"]}
    assert t_dev and t_test and not t_dev & t_test
    assert 0.15 <= len(back["dev"]) / 400 <= 0.35
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    d = datasets.load_dataset(str(out))  # the CAT config is the default when there are no pairs
    assert d["dev"].num_rows == len(back["dev"]) and d["test"].num_rows == len(back["test"])
    assert list(d["test"].features) == [
        "id",
        "type",
        "target",
        "bias_type",
        "context",
        "stereotype",
        "anti-stereotype",
        "unrelated",
        "lang",
        "source_id",
    ]


def test_evaluate_cats_on_a_release(cat_release, tiny_bert, tmp_path):
    from biaskit.evaluation.stereoset import run_cats

    _, out = cat_release
    s = run_cats(
        CatsOptions(
            data=out, models=[tiny_bert], out=tmp_path / "o", release_split="test", split="intrasentence", limit=5
        )
    ).summary
    assert s["count"] == 5
    r = s["data"]["release"]
    assert (r["release"], r["version"], r["split"], r["file"]) == ("stereoset-mini", "0.1.0", "test", "cats.jsonl")
    assert r["sha256"] == _sha(out / "cats.jsonl")
