"""The shared foundation: schema, readers (with their errors), registry, cache, I/O, CLI root."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from biaskit.cache import DiskCache, request_hash
from biaskit.errors import InputError, UnknownNameError
from biaskit.io import JsonlAppender, atomic_write_text, read_jsonl, write_jsonl
from biaskit.readers import read_pairs, write_pairs
from biaskit.registry import Registry
from biaskit.schema import CAT, BiasTuple, SentencePair, make_pair_id, normalize_bias_type


def _csv(tmp_path, text, name="pairs.csv"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


# ---------------------------------------------------------------- schema
def test_bias_type_normalisation():
    assert normalize_bias_type("Caste") == "caste"
    assert normalize_bias_type(" Physical Appearance ") == "physical-appearance"
    assert normalize_bias_type("socio-economic") == "socioeconomic"
    assert normalize_bias_type("race_color") == "race-color"


def test_pair_id_is_stable_and_content_based():
    a = SentencePair(
        sent_more="Poor people are lazy.",
        sent_less="Rich people are lazy.",
        direction="stereo",
        bias_type="Socioeconomic",
    )
    b = SentencePair(
        sent_more="Poor  people are lazy.",
        sent_less="Rich people are lazy.",
        direction="stereo",
        bias_type="socioeconomic",
    )
    assert a.pair_id == b.pair_id == make_pair_id("Poor people are lazy.", "Rich people are lazy.", "en")
    assert a.bias_type == "socioeconomic" and a.status == "raw"
    hi = SentencePair(sent_more="x y", sent_less="x z", direction="antistereo", bias_type="age", lang="hi")
    assert hi.pair_id != make_pair_id("x y", "x z", "en")


def test_pair_rejects_identical_and_unknown_direction():
    with pytest.raises(ValueError, match="identical"):
        SentencePair(sent_more="a b", sent_less=" a b ", direction="stereo", bias_type="age")
    with pytest.raises(ValueError):
        SentencePair(sent_more="a b", sent_less="a c", direction="sideways", bias_type="age")


def test_cat_and_tuple_ids():
    cat = CAT(
        split="intrasentence",
        target="chess player",
        bias_type="profession",
        context="The chess player was BLANK.",
        options=[
            {"sentence": "The chess player was asian.", "gold_label": "stereotype"},
            {"sentence": "The chess player was hispanic.", "gold_label": "anti-stereotype"},
            {"sentence": "The chess player was fox.", "gold_label": "unrelated"},
        ],
    )
    assert cat.cat_id.startswith("c-") and len({o.sentence_id for o in cat.options}) == 3
    with pytest.raises(ValueError, match="exactly one"):
        CAT(
            split="intrasentence",
            target="t",
            bias_type="race",
            context="c",
            options=[{"sentence": "a", "gold_label": "stereotype"}] * 3,
        )
    t = BiasTuple(identity="Brahmin", attribute="Priestly", axis="Caste", polarity="positive")
    assert t.axis == "caste" and t.tuple_id.startswith("t-")


# ---------------------------------------------------------------- readers
def test_crows_reader_real_file(crows_csv):
    res = read_pairs(crows_csv)
    assert res.format == "crows" and len(res) == 1508
    assert {p.direction for p in res} == {"stereo", "antistereo"}
    dup = [p for p in res if p.meta.get("duplicate_of")]
    assert len(dup) == 1 and dup[0].pair_id.endswith("~2")
    assert len({p.pair_id for p in res}) == 1508


def test_indibias_reader_two_views(indibias_csv):
    en = read_pairs(indibias_csv, lang="en")
    assert len(en) == 561 and {p.lang for p in en} == {"en"}
    types = {p.bias_type for p in en}
    assert "caste" in types and "religion" in types and "Caste" not in types
    with pytest.raises(InputError, match=r"row \d+: identical pair"):
        read_pairs(indibias_csv, lang="hi")
    both = read_pairs(indibias_csv, skip_invalid=True)
    assert len(both) == 561 * 2 - 1 and len(both.skipped) == 1
    by_src = {}
    for p in both:
        by_src.setdefault(p.source_id, set()).add(p.lang)
    assert sum(1 for v in by_src.values() if v == {"en", "hi"}) == 560


def test_reader_missing_column(tmp_path):
    p = _csv(tmp_path, "sent_more,sent_less,bias_type\na b,a c,age\n")
    with pytest.raises(InputError) as e:
        read_pairs(p, format="crows")
    msg = str(e.value)
    assert "pairs.csv" in msg and "stereo_antistereo" in msg and "Fix:" in msg


def test_reader_unknown_direction_names_row(tmp_path):
    p = _csv(tmp_path, "sent_more,sent_less,stereo_antistereo,bias_type\na b,a c,stereo,age\nd e,d f,maybe,age\n")
    with pytest.raises(InputError) as e:
        read_pairs(p)
    assert e.value.row == 2 and "maybe" in str(e.value) and "antistereo" in str(e.value)
    res = read_pairs(p, skip_invalid=True)
    assert len(res) == 1 and res.skipped[0].row == 2


def test_reader_empty_sentence_and_bad_encoding(tmp_path):
    p = _csv(tmp_path, "sent_more,sent_less,stereo_antistereo,bias_type\n ,a c,stereo,age\n")
    with pytest.raises(InputError, match="row 1, column 'sent_more'"):
        read_pairs(p)
    bad = tmp_path / "latin.csv"
    bad.write_bytes(
        "sent_more,sent_less,stereo_antistereo,bias_type\ncaf\xe9 a,caf\xe9 b,stereo,age\n".encode("latin-1")
    )
    with pytest.raises(InputError, match="UTF-8.*line 2"):
        read_pairs(bad)


def test_biaskit_jsonl_roundtrip(tmp_path):
    pairs = [
        SentencePair(
            sent_more="वह डॉक्टर है",
            sent_less="वह नर्स है",
            direction="stereo",
            bias_type="gender",
            lang="hi",
            provenance={"by": "test"},
        )
    ]
    for name in ("p.jsonl", "p.csv"):
        path = write_pairs(tmp_path / name, pairs)
        back = read_pairs(path)
        assert back.format == "biaskit"
        assert back.pairs[0].model_dump() == pairs[0].model_dump()


def test_jsonl_bad_line(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"sent_more": "a b", "sent_less": "a c", "direction": "stereo", "bias_type": "age"}\n{oops\n')
    with pytest.raises(InputError, match="row 2: invalid JSON"):
        read_pairs(p)


# ---------------------------------------------------------------- registry, cache, io
def test_registry_did_you_mean_and_lazy():
    reg = Registry("scorer")
    reg.register("mlm", "json:dumps")
    reg.register("clm", lambda: "clm")
    assert reg.get("MLM") is json.dumps
    with pytest.raises(UnknownNameError, match="Did you mean 'mlm'") as e:
        reg.get("mlmm")
    assert "Available: clm, mlm" in str(e.value)


def test_disk_cache_persists(tmp_path):
    c = DiskCache(tmp_path / "c.sqlite3", namespace="scores")
    key = {"model": "m", "sentence": "s", "method": "pll"}
    assert c.get(key) is None
    c.set(key, [1.5, -2.0])
    c.set_many([({"i": i}, i) for i in range(3)])
    again = DiskCache(tmp_path / "c.sqlite3", namespace="scores")
    assert again.get(key) == [1.5, -2.0] and len(again) == 4
    assert again.get_many([{"i": 1}, {"i": 9}]) == {request_hash({"i": 1}): 1}
    assert len(DiskCache(tmp_path / "c.sqlite3", namespace="other")) == 0


def test_atomic_write_and_resumable_log(tmp_path):
    p = atomic_write_text(tmp_path / "a" / "f.txt", "hello")
    assert p.read_text() == "hello" and not list(p.parent.glob(".*tmp"))
    log = tmp_path / "run.jsonl"
    with JsonlAppender(log) as ap:
        ap.write({"i": 1})
    with open(log, "a") as fh:  # a crash mid-write leaves half a line
        fh.write('{"i": 2, "tr')
    ap = JsonlAppender(log)
    assert ap.existing() == [{"i": 1}]
    ap.write({"i": 3})
    ap.close()
    assert read_jsonl(log) == [{"i": 1}, {"i": 3}]
    write_jsonl(tmp_path / "w.jsonl", [{"a": "ह"}])
    assert read_jsonl(tmp_path / "w.jsonl") == [{"a": "ह"}]


# ---------------------------------------------------------------- CLI root
def test_cli_version_and_help():
    out = subprocess.run([sys.executable, "-m", "biaskit.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("biaskit ")
    for group in ("evaluate", "curate", "annotate", "data"):
        h = subprocess.run([sys.executable, "-m", "biaskit.cli", group, "--help"], capture_output=True, text=True)
        assert h.returncode == 0, h.stderr


def test_evaluation_imports_without_openai_or_labelstudio():
    """Researchers install biaskit[evaluation] only: evaluation must not import openai/LS sdk."""
    code = (
        "import sys, importlib\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('openai', 'label_studio_sdk', 'googletrans', 'crowdkit', 'krippendorff'):\n"
        "            raise ImportError('blocked ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import biaskit.cli\n"
        "import pkgutil, biaskit.evaluation as ev\n"
        "for m in pkgutil.walk_packages(ev.__path__, 'biaskit.evaluation.'):\n"
        "    importlib.import_module(m.name)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_atomic_write_uses_normal_permissions(tmp_path):
    import os
    import stat

    mask = os.umask(0o022)
    try:
        p = atomic_write_text(tmp_path / "perm.txt", "x")
    finally:
        os.umask(mask)
    assert stat.S_IMODE(p.stat().st_mode) == 0o644


def test_cli_exit_codes_propagate():
    """typer.Exit(n) inside a command must become the process exit code."""
    import typer

    from biaskit import cli

    sub = typer.Typer()

    @sub.command()
    def boom() -> None:
        raise typer.Exit(3)

    @sub.command()
    def fine() -> None:
        pass

    cli.app.add_typer(sub, name="zz-test")
    try:
        with pytest.raises(SystemExit) as e:
            cli.main(["zz-test", "boom"])
        assert e.value.code == 3
        cli.main(["zz-test", "fine"])  # returns normally, exit code 0
    finally:
        cli.app.registered_groups = [g for g in cli.app.registered_groups if g.name != "zz-test"]


def test_atomic_dir_publishes_whole_or_nothing(tmp_path):
    from biaskit.io import atomic_dir

    out = tmp_path / "models" / "m"
    with atomic_dir(out) as tmp:
        (tmp / "config.json").write_text("{}")
        assert not out.exists()  # nothing visible until the block succeeds
    assert (out / "config.json").read_text() == "{}"
    with pytest.raises(RuntimeError):
        with atomic_dir(tmp_path / "models" / "crashed") as tmp:
            (tmp / "half.bin").write_text("x")
            raise RuntimeError("crash mid-write")
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["m"]  # no leftovers


def test_read_json_errors_name_file_line_and_fix(tmp_path):
    from biaskit.io import read_json, read_table

    bad = tmp_path / "reg.json"
    bad.write_text('{\n  "a": 1,\n}\n', encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_json(bad, fix="repair it.")
    assert e.value.row == 3 and "reg.json" in str(e.value) and "Fix: repair it." in str(e.value)
    with pytest.raises(InputError, match="file not found.*Fix: look elsewhere"):
        read_json(tmp_path / "nope.json", missing_fix="look elsewhere.")
    (tmp_path / "latin.json").write_bytes(b'{"a": "caf\xe9"}')
    with pytest.raises(InputError, match="not valid UTF-8"):
        read_json(tmp_path / "latin.json")
    # a .json table goes through the same checks (it used to raise a bare JSONDecodeError)
    bad_table = tmp_path / "judgments.json"
    bad_table.write_text('[{"task": "t1", "worker": "w1", "label": "yes"},]', encoding="utf-8")
    with pytest.raises(InputError, match=r"judgments.json, row 1: invalid JSON"):
        read_table(bad_table)
    (tmp_path / "ok.json").write_text('\ufeff[{"task": "t1"}]', encoding="utf-8")  # a BOM is fine
    assert read_table(tmp_path / "ok.json").to_dict(orient="records") == [{"task": "t1"}]


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "pairs", "--bogus"],  # unknown option
        ["annotate", "pull", "--out", "x.csv"],  # missing required option
        # bad choice (given before --data: click checks options in the order given, and a missing --data file
        # would be reported first)
        ["evaluate", "pairs", "--scorer", "nope", "--data", "x", "--model", "m", "--out", "o"],
    ],
)
def test_cli_usage_errors_are_messages_not_tracebacks(argv):
    out = subprocess.run([sys.executable, "-m", "biaskit.cli", *argv], capture_output=True, text=True)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr + out.stdout
    assert "Error:" in out.stderr and "Usage: biaskit" in out.stderr
