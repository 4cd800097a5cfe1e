"""A release names no person and no path of the machine that built it, and `release verify` finds what
would (docs/release.md, "Privacy"); the card says who wrote and who validated each view, from the records.

Hand-made records carry annotators' e-mail logins in every place biaskit's stages put them (CAT
validators' labels, translation reviewers and editors, pair edits, a reviewer's comment, an agreement
report) and an absolute path (a translation's candidates file). The expected pseudonyms are computed
here from their definition (HMAC-SHA256 with the key file, "<release name> NUL <login>", first 10 hex
digits), and the files are searched by this test, not by the scanner under test. The pipeline run with
real Label Studio accounts: tests/test_release_privacy_labelstudio.py.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import pytest
from conftest import run_cli

from biaskit.errors import InputError
from biaskit.release import BuildOptions, build_release, verify_release
from biaskit.schema import CAT

ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"
TARGETS = ("Muslim", "Hindu", "Sikh", "Christian")
GEN = {
    "model": "gemma3-270m",
    "endpoint": "http://127.0.0.1:9/v1",
    "request_hash": "0" * 64,
    "timestamp": "2025-01-01T00:00:00+00:00",
    "task": "cat_intrasentence",
    "prompt_id": "cat_intrasentence",
    "prompt_version": "2",
}


def _pseudonym(key: bytes, release: str, login: str) -> str:
    return "ann-" + hmac.new(key, f"{release}\0{login}".encode(), hashlib.sha256).hexdigest()[:10]


def _en_cat(t: str) -> CAT:
    labels = [{"label": "stereotype", "annotator": w} for w in (ALICE, BOB, CAROL)]
    fills = {"stereotype": "strict", "anti-stereotype": "relaxed", "unrelated": "triangular"}
    return CAT(
        split="intrasentence",
        target=t,
        bias_type="religion",
        context=f"The {t} neighbour was very BLANK.",
        options=[
            {
                "sentence": f"The {t} neighbour was very {w}.",
                "gold_label": g,
                "human_labels": [{**lab, "label": g} for lab in labels],
            }
            for g, w in fills.items()
        ],
        provenance=dict(GEN),
        meta={"annotation": {g: {"validators": 3, "agree": 3, "min_agree": 3} for g in fills}},
    )


def _hi_cat(src: CAT, candidates: Path) -> CAT:
    return CAT(
        split="intrasentence",
        target="लोग",
        bias_type="religion",
        context=f"{src.target} पड़ोसी बहुत BLANK था।",
        options=[
            {"sentence": f"{src.target} पड़ोसी बहुत {w} था।", "gold_label": g}
            for g, w in (("stereotype", "सख़्त"), ("anti-stereotype", "सहज"), ("unrelated", "तिकोना"))
        ],
        lang="hi",
        source_id=src.cat_id,
        provenance={
            "source": "cat-translation-review",
            "candidates_file": str(candidates),
            "source_cat_id": src.cat_id,
            "engine": "review",
            "model": None,
            "source_provenance": dict(GEN),
        },
        meta={
            "review": {
                "reviewers": [
                    {"worker": BOB, "choice": "none", "comment": f"ask {CAROL} about the BLANK"},
                    {"worker": CAROL, "choice": "none"},
                ],
                "editors": [BOB, CAROL],
                "winner_engine": "review",
                "winner_model": None,
                "edited": True,
                "n_reviewers": 2,
            }
        },
    )


def _pair(i: int, group: str, other: str) -> dict:
    return {
        "sent_more": f"{group} people number {i} are lazy.",
        "sent_less": f"{other} people number {i} are lazy.",
        "direction": "stereo",
        "bias_type": "religion",
        "lang": "en",
        "group_more": group,
        "group_less": other,
        "status": "accepted",
        "provenance": {
            "source": "biaskit-curate",
            "generation": {**GEN, "task": "sentences", "prompt_id": "sentences"},
            "edits": [{"field": "sent_more", "original": "x", "edited": "y", "annotators": [ALICE], "editors": 1}],
        },
        "meta": {"annotation": {"validity": {"label": "stereo", "n_annotators": 3}}},
    }


def _inputs(tmp_path: Path) -> tuple[list[Path], list[str]]:
    """Record files and history (an agreement report, a CAT retention report) as the stages write them."""
    from biaskit.annotation.agreement import agreement_report
    from biaskit.annotation.judgment_options import AgreementOptions

    en = [_en_cat(t) for t in TARGETS]
    hi = [_hi_cat(c, tmp_path / "work" / "cat_translate" / "cat_candidates.jsonl") for c in en[:2]]
    cats = tmp_path / "cats.jsonl"
    cats.write_text("".join(c.model_dump_json() + "\n" for c in en + hi), encoding="utf-8")
    pairs = tmp_path / "pairs.jsonl"
    rows = [_pair(i, g, h) for i, (g, h) in enumerate([("Muslim", "Hindu"), ("Sikh", "Jain"), ("Hindu", "Sikh")])]
    pairs.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    import pandas as pd

    judg = pd.DataFrame(
        {
            "task": [f"t{i}" for i in range(4) for _ in range(3)],
            "worker": [ALICE, BOB, CAROL] * 4,
            "question": "option_stereotype",
            "label": "stereotype",
        }
    )
    judg.loc[0, "label"] = "unrelated"
    judg.to_csv(tmp_path / "judgments.csv", index=False)
    agreement_report(AgreementOptions(judgments=tmp_path / "judgments.csv", out=tmp_path / "agree"))
    retention = tmp_path / "retention.json"
    retention.write_text(
        json.dumps(
            {
                "rows": [],
                "totals": [],
                "overall": {"split": "all", "domain": "total", "drafted": 5, "valid": 4, "validated": 4},
                "problems": {},
                "validated": 4,
                "by_target": [],
            }
        ),
        encoding="utf-8",
    )
    return [cats, pairs], [f"CAT validation={tmp_path / 'agree' / 'agreement.json'}", f"CAT retention={retention}"]


def _build(tmp_path: Path, out: Path, **kw) -> Path:
    records, history = _inputs(tmp_path)
    opts = {"name": "priv", "version": "1.0.0", "created": "2025-01-01", "plots": False, "keyness": False, **kw}
    build_release(records, out, BuildOptions(history=history, **opts), base=tmp_path)
    return out


def _all_text(folder: Path) -> dict[str, str]:
    """Every file of a release as text: Parquet cells joined, other files decoded."""
    import pyarrow.parquet as pq

    out = {}
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = f.relative_to(folder).as_posix()
        if f.suffix == ".parquet":
            out[rel] = json.dumps(pq.read_table(f).to_pylist(), ensure_ascii=False)
        elif f.suffix != ".png":
            out[rel] = f.read_text(encoding="utf-8")
    return out


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_a_release_names_annotators_by_one_keyed_pseudonym_and_no_path(tmp_path):
    out = _build(tmp_path, tmp_path / "releases" / "priv-1.0.0")
    res = verify_release(out)
    assert res.ok, res.problems
    for rel, text in _all_text(out).items():
        for bad in ("example.org", "alice", "bob", "carol", str(tmp_path), "/tmp/"):
            assert bad not in text, (rel, bad)
    key = bytes.fromhex((tmp_path / "releases" / ".biaskit" / "release.key").read_text().strip())
    p = {w: _pseudonym(key, "priv", w) for w in (ALICE, BOB, CAROL)}
    assert len(set(p.values())) == 3
    cats = _rows(out / "cats.jsonl")
    en = [c for c in cats if c["lang"] == "en"]
    hi = [c for c in cats if c["lang"] == "hi"]
    for c in en:
        got = [[lab["annotator"] for lab in o["human_labels"]] for o in c["options"]]
        assert got == [[p[ALICE], p[BOB], p[CAROL]]] * 3
    for c in hi:
        rev = c["meta"]["review"]
        assert [r["worker"] for r in rev["reviewers"]] == [p[BOB], p[CAROL]] and rev["editors"] == [p[BOB], p[CAROL]]
        assert rev["reviewers"][0]["comment"] == f"ask {p[CAROL]} about the BLANK"
        assert c["provenance"]["candidates_file"] == "work/cat_translate/cat_candidates.jsonl"  # relative to base
    for r in _rows(out / "pairs.jsonl"):
        assert r["views"]["en"]["provenance"]["edits"][0]["annotators"] == [p[ALICE]]
    # the same person, the same name in every file: StereoSet's layout and the card's per-annotator figures
    human_ids = {
        lab["human_id"]
        for f in (out / "stereoset").glob("*.json")
        for exs in json.loads(f.read_text(encoding="utf-8"))["data"].values()
        for ex in exs
        for s in ex["sentences"]
        for lab in s["labels"]
    }
    assert set(p.values()) <= human_ids <= set(p.values()) | {"gold"}
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "CAT validation, items per annotator: " + ", ".join(f"{n} 4" for n in sorted(p.values())) in card


def test_the_card_says_who_wrote_and_who_validated_each_view_from_the_records(tmp_path):
    out = _build(tmp_path, tmp_path / "rel")
    card = (out / "README.md").read_text(encoding="utf-8")
    # who wrote it: the English CATs and pairs are LLM drafts (the pairs edited by annotators); the Hindi CATs
    # were written by the reviewers (winner engine `review`), not by the model of their English source
    assert "| en | LLM draft (gemma3-270m) | 4 |" in card
    assert "| en | LLM draft (gemma3-270m), edited by annotators | 3 |" in card
    assert "| hi | reviewers (written by them) | 2 |" in card
    assert "| en | biaskit-curate | LLM draft (gemma3-270m) | 4 |" in card  # the source of the English text
    assert "Machine-generated text" not in card and "MT engines" not in card  # no machine translated them
    # validators per record as the records carry them (3 per CAT, the rule >= 3), never a fixed "five"
    assert "five" not in card
    assert (
        "validated by en: 3 validators per CAT (at least 3 had to give the writer's label on every option, "
        "and at least 3 did)" in card
    )
    assert "CAT validation (en): 3 annotators per record on 4 released records" in card
    assert "CAT translation review (hi): 2 reviewers per record on 2 released records" in card
    assert "pair validation (en): 3 annotators per record on 3 released records" in card
    info = json.loads((out / "release.json").read_text(encoding="utf-8"))
    # the CATs the pipeline drafted are StereoSet's design: evaluated under its protocol (the pairs are not)
    assert info["protocol"] is None  # pairs and CATs of different origins in one release
    cats_only = build_release(
        [tmp_path / "cats.jsonl"],
        tmp_path / "cats-only",
        BuildOptions(name="c", version="1.0.0", created="2025-01-01", plots=False, keyness=False),
    )
    info = json.loads((Path(cats_only.out) / "release.json").read_text(encoding="utf-8"))
    assert info["protocol"] == "stereoset"
    assert info["protocol_from"] == "StereoSet-style CATs drafted by `biaskit curate cats`"


def test_a_rebuild_gives_the_same_bytes_and_the_key_never_ships(tmp_path):
    a = _build(tmp_path, tmp_path / "out" / "a")
    b = _build(tmp_path, tmp_path / "out" / "b")
    ta, tb = _all_text(a), _all_text(b)
    assert ta == tb
    key = (tmp_path / "out" / ".biaskit" / "release.key").read_text().strip()
    assert len(key) == 64 and all(key not in t for t in ta.values())
    # another key: other pseudonyms (nobody can link two releases built with different keys)
    c = _build(tmp_path, tmp_path / "other" / "c", pseudonym_key=tmp_path / "k2.key")
    en_a = _rows(a / "cats.jsonl")[0]["options"][0]["human_labels"]
    en_c = _rows(c / "cats.jsonl")[0]["options"][0]["human_labels"]
    assert [x["label"] for x in en_a] == [x["label"] for x in en_c]
    assert not {x["annotator"] for x in en_a} & {x["annotator"] for x in en_c}
    with pytest.raises(InputError, match="would be published with the release"):
        _build(tmp_path, tmp_path / "d", pseudonym_key=tmp_path / "d" / "release.key")


def _edit_jsonl(path: Path, row: int, edit) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    obj = json.loads(lines[row - 1])
    edit(obj)
    lines[row - 1] = json.dumps(obj, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _edit_parquet(path: Path, row: int, column: str, value: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    values = t.column(column).to_pylist()
    values[row - 1] = value
    pq.write_table(t.set_column(t.column_names.index(column), column, pa.array(values, type=pa.string())), path)


def _edit_csv(path: Path, row: int, column: str, value: str) -> None:
    import csv

    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    rows[row][rows[0].index(column)] = value
    with open(path, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows)


def _edit_text(path: Path, line: str) -> int:
    text = path.read_text(encoding="utf-8")
    path.write_text(text + line + "\n", encoding="utf-8")
    return text.count("\n") + 1


def _insert_email(out: Path):
    def edit(c):
        c["options"][0]["human_labels"][1]["annotator"] = "dave@example.net"

    _edit_jsonl(out / "cats.jsonl", 2, edit)
    return "cats.jsonl, row 2: field 'options[0].human_labels[1].annotator': an e-mail address (da…@example.net)."


def _insert_posix_path(out: Path):
    f = sorted(p for p in (out / "csv").glob("crows-en-*.csv") if p.read_text(encoding="utf-8").count("\n") > 1)[0]
    _edit_csv(f, 1, "sent_more", "Dave keeps it in /home/dave/notes.txt today.")
    return f"{f.relative_to(out)}, row 1, column 'sent_more': an absolute path (/home/dave/notes.txt)."


def _insert_windows_path(out: Path):
    f = sorted((out / "data").glob("cats-*.parquet"))[0]
    _edit_parquet(f, 1, "context", r"C:\Users\dave\cats.txt")
    return f"{f.relative_to(out)}, row 1, column 'context': an absolute path (C:\\Users\\dave\\cats.txt)."


def _insert_secret(out: Path):
    meta = json.loads((out / "release.json").read_text(encoding="utf-8"))
    meta["license"] = "cc-by-4.0 Zq7pLm3xVb9TkW2sRd5n"  # the value of a configured key (set by the test)
    text = json.dumps(meta, indent=2)
    (out / "release.json").write_text(text, encoding="utf-8")
    row = next(i for i, line in enumerate(text.splitlines(), start=1) if line.lstrip().startswith('"license"'))
    return f"release.json, row {row}: field 'license': a secret (the value of a configured key or token)."


def _insert_home(out: Path):
    row = _edit_text(out / "README.md", f"Built in {Path.home()} by hand.")
    return f"README.md, row {row}: "


@pytest.mark.parametrize(
    "insert", [_insert_email, _insert_posix_path, _insert_windows_path, _insert_secret, _insert_home]
)
def test_verify_names_the_file_row_and_field_of_what_a_release_must_not_hold(tmp_path, capsys, monkeypatch, insert):
    monkeypatch.setenv("BIASKIT_TEST_API_KEY", "Zq7pLm3xVb9TkW2sRd5n")
    out = _build(tmp_path, tmp_path / "rel")
    assert verify_release(out).ok
    expected = insert(out)
    code, _, err = run_cli(["release", "verify", str(out)], capsys)
    assert code == 2
    found = [line for line in err.splitlines() if line.startswith(f"error: {out}/{expected.split(',')[0]}")]
    assert any(f"{out}/{expected}" in line for line in found), (expected, err)
    assert "Zq7pLm3xVb9TkW2sRd5n" not in err  # a secret is named, never printed


def test_public_paths_commands_and_text():
    from biaskit.public import public_command, public_path, public_text

    base = "/srv/work/proj"
    assert public_path("/srv/work/proj/release/x-1.0.0", base) == "release/x-1.0.0"
    assert public_path("/home/alice/models/muril-base-cased", base) == "muril-base-cased"
    assert public_path(r"C:\Users\alice\model.gguf", base) == "model.gguf"
    assert public_path("models/tiny", base) == "models/tiny"
    assert public_path("/srv/work/proj", base) == "."
    assert (
        public_command("biaskit run --project /srv/work/proj --out=/home/alice/o '/home/alice/my dir/f.jsonl'", base)
        == "biaskit run --project . --out=o f.jsonl"
    )
    assert public_text("wrote /srv/work/proj/eval/s.json and and/or 1/2 https://hf.co/a/b", base) == (
        "wrote eval/s.json and and/or 1/2 https://hf.co/a/b"
    )


def test_every_person_field_is_pseudonymised_wherever_it_is_nested():
    from pydantic_core import to_json

    from biaskit.release.privacy import Pseudonyms, needs_scrub, scrub

    pz = Pseudonyms(b"k" * 32, "r")
    prov = {
        "source": "translation-review",
        "engine": "review",
        "model": f"{BOB},{CAROL}",  # the reviewers who typed the released text (a proposal's "model")
        "editors": [BOB],
        "source_provenance": {"edits": [{"annotators": [ALICE], "editors": 1}]},
    }
    meta = {
        "review": {"winner_engine": "review", "winner_model": BOB, "editors": [BOB], "n_reviewers": 2},
        "returned": {"fields": [{"candidates": [{"text": "t", "annotators": [CAROL]}], "editors": 1}]},
        "annotation": {"stereotype": {"n_annotators": 3}},
        "note": "no person here",
    }
    raw = to_json({"provenance": prov, "meta": meta})
    assert needs_scrub(raw) and not needs_scrub(to_json({"provenance": {"endpoint": "http://h:1/v1"}, "meta": {}}))
    p2, m2 = scrub(prov, pz), scrub(meta, pz)
    assert p2["model"] == f"{pz(BOB)},{pz(CAROL)}" and p2["editors"] == [pz(BOB)]
    assert p2["source_provenance"]["edits"][0] == {"annotators": [pz(ALICE)], "editors": 1}  # a count stays
    assert m2["review"]["winner_model"] == pz(BOB) and m2["review"]["n_reviewers"] == 2
    assert m2["returned"]["fields"][0]["candidates"][0]["annotators"] == [pz(CAROL)]
    assert m2["annotation"] == meta["annotation"] and m2["note"] == "no person here"
    assert "example.org" not in json.dumps([p2, m2])
    # a model's name stays a model's name, a pseudonym stays itself (a record of an earlier release)
    assert pz("llm:gpt-4o-mini") == "llm:gpt-4o-mini" and pz(pz(ALICE)) == pz(ALICE)


@pytest.mark.parametrize(
    "text",
    [
        "see /home/alice/x",
        "file=/home/alice/x",
        "'/home/alice/x'",
        "(/home/alice/x)",
        "[/home/alice/x]",
        "failed\t/home/alice/x",
        "failed\n/home/alice/x",
        "failed\u00a0/home/alice/x",
        "failed\x0b/home/alice/x",
    ],
)
def test_the_quick_test_before_scrubbing_sees_every_path_public_text_rewrites(text):
    """``needs_scrub`` lets a record skip :func:`scrub`: it must say yes wherever :func:`public_text` finds a
    path (a path after '=', a quote, a bracket, a tab or a newline, which JSON writes as an escape)."""
    from pydantic_core import to_json

    from biaskit.public import public_text
    from biaskit.release.privacy import Pseudonyms, needs_scrub, scrub

    assert "/home/alice" not in public_text(text)  # a path biaskit.public rewrites ...
    assert needs_scrub(to_json({"provenance": {"note": text}, "meta": {}}))  # ... is seen by the quick test
    assert "/home/alice" not in json.dumps(scrub({"note": text}, Pseudonyms(b"k" * 32, "r")))


@pytest.mark.parametrize(
    "text", ["failed\t/home/alice/x", "failed\n/home/alice/x", "a\u00a0/home/alice/x", "a\x0b/home/alice/x"]
)
@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_the_scan_finds_a_path_after_any_space_in_jsonl_and_parquet(tmp_path, text, suffix):
    """The scan's quick tests (raw JSONL bytes, Arrow's RE2 kernel on a Parquet column) let a row skip the
    full check: a path after a tab or newline (a JSON escape in JSONL) or a non-ASCII space is still found."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from biaskit.release.scan import Detector, scan_file

    f = tmp_path / f"rows{suffix}"
    rows = [{"note": "nothing here"}, {"note": text}]
    if suffix == ".jsonl":
        f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        pq.write_table(pa.Table.from_pylist(rows), f)
    found = [(fd.row, fd.what) for fd in scan_file(f, Detector())]
    assert found == [(2, "an absolute path (/home/alice/x)")], found


def test_verify_finds_the_user_name_of_this_machine(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("getpass.getuser", lambda: "zorbanix")
    out = _build(tmp_path, tmp_path / "rel")
    row = _edit_text(out / "README.md", "Curated by zorbanix, with care.")
    code, _, err = run_cli(["release", "verify", str(out)], capsys)
    assert code == 2 and f"{out}/README.md, row {row}: the user name of this machine (zorbanix)." in err, err
    monkeypatch.setattr("getpass.getuser", lambda: "root")  # a generic account's name is a word, not a person
    out2 = _build(tmp_path, tmp_path / "rel2")
    _edit_text(out2 / "README.md", "The root of the problem.")
    assert not [
        line for line in run_cli(["release", "verify", str(out2)], capsys)[2].splitlines() if "user name" in line
    ]
