"""The ``googletrans`` engine against a local HTTPS stand-in of translate.googleapis.com.

googletrans needs the internet; here its real client code (request building, httpx over TLS,
response parsing) talks to ``tests/mt_helpers.GoogleStandIn`` on 127.0.0.1, which answers in
Google's JSON layout from a fixed table. The translations are therefore ours, not Google's.
"""

from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("googletrans")

from biaskit.curation.mt_base import MTError
from biaskit.curation.mt_googletrans import GoogleTransEngine
from biaskit.curation.translate import translate_pairs
from mt_helpers import EN_PAIRS, GoogleStandIn

from biaskit.cache import DiskCache
from biaskit.cli import main

TABLE = {
    # a synonym in S2 (चिकित्सक for डॉक्टर): not minimal -> span substitution repairs it
    "The man is a doctor.": "आदमी एक डॉक्टर है।",
    "The woman is a doctor.": "औरत एक चिकित्सक है।",
    "man": "आदमी",
    "woman": "औरत",
    # he/she collapse to वह
    "He is a nurse.": "वह एक नर्स है।",
    "She is a nurse.": "वह एक नर्स है।",
    "He": "वह",
    "She": "वह",
    # a clean pair
    "Priya went to Delhi.": "प्रिया दिल्ली गई।",
    "Rahul went to Delhi.": "राहुल दिल्ली गया।",
}

PAIRS = list(EN_PAIRS)


@pytest.fixture
def standin(tmp_path):
    s = GoogleStandIn(tmp_path, TABLE)
    yield s
    s.close()


def _engine(s, **kw):
    return GoogleTransEngine(s.host, verify=str(s.cert), backoff=0.01, **kw)


def test_real_client_code_path(standin):
    e = _engine(standin)
    out = e.translate(["The man is a doctor.", "", "Unknown words"], "en", "hi")
    assert out == ["आदमी एक डॉक्टर है।", "", "[hi] Unknown words"]
    # googletrans built the requests: gtx client, source/target codes, the text; empty text not sent
    assert len(standin.requests) == 2
    r = standin.requests[0]
    assert (r["path"], r["client"], r["sl"], r["tl"]) == ("/translate_a/single", "gtx", "en", "hi")
    assert {q["q"] for q in standin.requests} == {"The man is a doctor.", "Unknown words"}
    assert "t" in r["dt"]


def test_rate_limit_is_retried_per_text(standin):
    standin.fail_first = 2  # two HTTP 429 answers
    e = _engine(standin, concurrency=1)
    assert e.translate(["He", "She"], "en", "hi") == ["वह", "वह"]
    assert len(standin.requests) == 4  # 2 failures + 2 successes: nothing re-sent twice


def test_retries_exhausted_is_a_clear_error(standin):
    standin.fail_first = 100
    e = _engine(standin, retries=2, concurrency=1)
    with pytest.raises(MTError, match="request failed 3 times.*429"):
        e.translate(["He"], "en", "hi")


def test_offline_fails_fast_with_a_clear_message(tmp_path):
    import socket

    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    e = GoogleTransEngine(f"127.0.0.1:{port}", retries=3)
    t = time.monotonic()
    with pytest.raises(MTError, match="cannot reach 127.0.0.1.*offline"):
        e.translate(["The man is a doctor."], "en", "hi")
    assert time.monotonic() - t < 5  # no retry loop on a connection error


def test_bad_target_language(standin):
    with pytest.raises(MTError, match="invalid destination language"):
        _engine(standin).translate(["x"], "en", "klingon")


def test_pairs_span_substitution_and_collapse(standin, tmp_path):
    out = tmp_path / "c.jsonl"
    res = translate_pairs(PAIRS, "hi", [_engine(standin)], out, cache=DiskCache(tmp_path / "c.db", namespace="mt"))
    recs = {r["pair_id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    doc = recs[PAIRS[0].pair_id]["candidates"][0]
    # independent: आदमी एक डॉक्टर / औरत एक चिकित्सक (2 spans); S2 rebuilt from S1 by swapping the span
    assert (doc["sent_more"], doc["sent_less"]) == ("आदमी एक डॉक्टर है।", "औरत एक डॉक्टर है।")
    assert doc["strategy"] == "span-substitution (base: sent_more)"
    assert doc["provenance"]["independent"] == {"sent_more": "आदमी एक डॉक्टर है।", "sent_less": "औरत एक चिकित्सक है।"}
    assert [f["code"] for f in doc["flags"]] == ["span_substituted"]
    nurse = recs[PAIRS[1].pair_id]["candidates"][0]
    assert nurse["strategy"] == "independent"  # वह / वह: no substitution can help
    codes = {f["code"] for f in nurse["flags"]}
    assert {"identical", "translation_collapsed"} <= codes
    assert recs[PAIRS[2].pair_id]["candidates"][0]["flags"] == []
    # 6 sentences + the spans of the two pairs that needed alignment (man/woman, He/She); Priya/Rahul
    # differ in the name and the verb's gender agreement (गई/गया), which counts as one change
    assert res.engine_stats["googletrans:google-translate"]["requested"] == 6 + 4


def test_cli_end_to_end_and_rerun_costs_nothing(standin, tmp_path, monkeypatch):
    from biaskit.io import write_jsonl

    src = tmp_path / "pairs.jsonl"
    write_jsonl(src, PAIRS)
    out = tmp_path / "cands.jsonl"
    monkeypatch.setenv("BIASKIT_GOOGLETRANS_HOST", standin.host)
    monkeypatch.setenv("BIASKIT_GOOGLETRANS_CA", str(standin.cert))
    args = ["curate", "translate", "--pairs", str(src), "--target", "hi", "--engines", "googletrans", "--out", str(out)]
    main(args)
    first = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert len(first) == 3 and first[0]["candidates"][0]["provenance"]["host"] == standin.host
    n = len(standin.requests)
    main(args)  # resumed: every pair already done
    main(args + ["--restart"])  # redone, but from the mt cache
    assert len(standin.requests) == n
    again = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["candidates"] for r in again] == [r["candidates"] for r in first]


def test_cli_offline_error_is_one_line(tmp_path, monkeypatch, capsys):
    from biaskit.io import write_jsonl

    src = tmp_path / "pairs.jsonl"
    write_jsonl(src, PAIRS[:1])
    monkeypatch.setenv("BIASKIT_GOOGLETRANS_HOST", "127.0.0.1:1")
    with pytest.raises(SystemExit) as exc:
        main(
            [
                "curate",
                "translate",
                "--pairs",
                str(src),
                "--target",
                "hi",
                "--engines",
                "googletrans",
                "--out",
                str(tmp_path / "o.jsonl"),
            ]
        )
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "cannot reach 127.0.0.1:1" in err and "Traceback" not in err


def test_indibias_csv_through_the_stand_in(tmp_path, monkeypatch):
    """IndiBias' English pairs, 'translated' by a stand-in that answers with IndiBias' own Hindi: the
    candidates reproduce the dataset's Hindi and its known problems are flagged."""
    import pandas as pd
    from conftest import public_dataset

    csv = public_dataset("indibias-sample")
    df = pd.read_csv(csv).head(3)
    table = {}
    for r in df.itertuples():
        table[r.modified_eng_sent_more] = r.sent_more_hindi
        table[r.modified_eng_sent_less] = r.sent_less_hindi
    s = GoogleStandIn(tmp_path, table)
    try:
        monkeypatch.setenv("BIASKIT_GOOGLETRANS_HOST", s.host)
        monkeypatch.setenv("BIASKIT_GOOGLETRANS_CA", str(s.cert))
        out = tmp_path / "c.jsonl"
        main(
            [
                "curate",
                "translate",
                "--pairs",
                str(csv),
                "--limit",
                "3",
                "--target",
                "hi",
                "--engines",
                "googletrans",
                "--out",
                str(out),
            ]
        )
    finally:
        s.close()
    recs = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    # IndiBias' columns are S1/S2; biaskit's sent_more is S2 in antistereo rows (row 2 here)
    assert df.stereo_antistereo.tolist() == ["stereo", "stereo", "antistereo"]
    anti = df.stereo_antistereo == "antistereo"
    en_more = df.modified_eng_sent_less.where(anti, df.modified_eng_sent_more).tolist()
    hi_more = df.sent_less_hindi.where(anti, df.sent_more_hindi).tolist()
    hi_less = df.sent_more_hindi.where(anti, df.sent_less_hindi).tolist()
    assert [r["source"]["sent_more"] for r in recs] == en_more
    assert [r["candidates"][0]["sent_more"] for r in recs] == hi_more
    assert [r["candidates"][0]["sent_less"] for r in recs] == hi_less
    assert recs[0]["candidates"][0]["flags"] == []  # brahmin / OBC: clean
    codes1 = {f["code"] for f in recs[1]["candidates"][0]["flags"]}  # मकान मालिक vs जमींदार
    assert "translation_not_minimal" in codes1
    assert recs[0]["provenance"]["source_id"] == "indibias-649"
