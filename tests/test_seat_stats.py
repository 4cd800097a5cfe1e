"""SEAT/WEAT statistics on small vectors (by hand and by brute force), bleaching, test files, encoders."""

from __future__ import annotations

import itertools
import json
import math
import random

import numpy as np
import pytest
from biaskit.evaluation.options import SeatOptions
from biaskit.evaluation.seat import (
    Encoder,
    bleach_terms,
    effect_size_from_s,
    p_value_from_s,
    prepare_sentences,
    read_seat_test,
    resolve_tests,
    run_seat,
    s_wAB,
    weat,
)

from biaskit.errors import BiaskitError, InputError


def _unit(deg):
    return (math.cos(math.radians(deg)), math.sin(math.radians(deg)))


def test_effect_size_and_exact_p_by_hand():
    # A = {(1,0)}, B = {(0,1)}: for a unit vector w, s(w) = w_x - w_y.
    # X = {0deg, 60deg}: s = 1, -t;  Y = {90deg, 30deg}: s = -1, t;  t = sqrt(3)/2 - 1/2
    t = math.sqrt(3) / 2 - 0.5
    X = np.array([_unit(0), _unit(60)])
    Y = np.array([_unit(90), _unit(30)])
    A, B = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    assert s_wAB(X, A, B) == pytest.approx([1, -t])
    assert s_wAB(Y, A, B) == pytest.approx([-1, t])
    # d = (mean_X - mean_Y) / sample std of {1, -t, -1, t} = (1 - t) / sqrt((2 + 2t^2) / 3)
    r = weat(X, Y, A, B)
    assert r["effect_size"] == pytest.approx((1 - t) / math.sqrt((2 + 2 * t * t) / 3))
    # the 6 re-partitions give sum_X' s in {1-t, 0, 1+t, -1-t, 0, -1+t}: two are >= 1-t -> p = 2/6
    assert r["p_value"] == pytest.approx(1 / 3) and r["p_method"] == "exact" and r["n_partitions"] == 6
    # swapping X and Y flips the sign of d
    assert weat(Y, X, A, B)["effect_size"] == pytest.approx(-r["effect_size"])


def _cos(u, v):
    return sum(a * b for a, b in zip(u, v, strict=False)) / math.sqrt(sum(a * a for a in u) * sum(b * b for b in v))


def _brute(X, Y, A, B):
    """Effect size and p-value from the definitions with plain Python: every re-partition (X', Y')
    of X u Y with |X'| = |X|, statistic S = sum_{X'} s - sum_{Y'} s, p = #{S' >= S} / #partitions."""

    def s(w):
        return sum(_cos(w, a) for a in A) / len(A) - sum(_cos(w, b) for b in B) / len(B)

    sx, sy = [s(x) for x in X], [s(y) for y in Y]
    allv = sx + sy
    mean = sum(allv) / len(allv)
    sd = math.sqrt(sum((v - mean) ** 2 for v in allv) / (len(allv) - 1))
    d = (sum(sx) / len(sx) - sum(sy) / len(sy)) / sd
    obs = sum(sx) - sum(sy)
    hits = total = 0
    for idx in itertools.combinations(range(len(allv)), len(X)):
        xs = sum(allv[i] for i in idx)
        stat = xs - (sum(allv) - xs)
        hits += stat >= obs - 1e-12
        total += 1
    return d, hits / total


@pytest.mark.parametrize("seed,nx,ny", [(0, 5, 5), (1, 4, 4), (2, 3, 5), (3, 6, 6)])
def test_brute_force_agrees(seed, nx, ny):
    rng = random.Random(seed)

    def vec():
        return [rng.uniform(-1, 1) for _ in range(4)]

    X, Y = [vec() for _ in range(nx)], [vec() for _ in range(ny)]
    A, B = [vec() for _ in range(3)], [vec() for _ in range(4)]
    d, p = _brute(X, Y, A, B)
    r = weat(np.array(X), np.array(Y), np.array(A), np.array(B))
    assert r["effect_size"] == pytest.approx(d, rel=1e-9)
    assert r["p_value"] == pytest.approx(p) and r["p_method"] == "exact"
    assert r["n_partitions"] == math.comb(nx + ny, nx)


def test_sampled_p_value_definition():
    rng = np.random.default_rng(5)
    sX, sY = rng.normal(0.3, 1, 8), rng.normal(0, 1, 8)  # C(16, 8) = 12870 partitions
    exact = p_value_from_s(sX, sY, n_samples=100_000)
    assert exact["p_method"] == "exact" and exact["n_permutations"] == 12870
    sampled = p_value_from_s(sX, sY, n_samples=5000, seed=7)
    assert sampled["p_method"] == "sampled" and sampled["n_permutations"] == 5000
    # sd of a 5000-draw estimate is <= 0.0071: 5 sd
    assert abs(sampled["p_value"] - exact["p_value"]) < 0.036
    assert p_value_from_s(sX, sY, n_samples=5000, seed=7) == sampled  # seeded
    # the observed partition is counted as a hit: p >= 1 / n_samples even for an extreme test
    extreme = p_value_from_s(np.full(8, 10.0) + np.arange(8), -np.full(8, 10.0) - np.arange(8), n_samples=1000)
    assert extreme["p_value"] == pytest.approx(1 / 1000)
    # exact test on the same extreme split: only the observed partition reaches it
    assert p_value_from_s(np.array([3.0, 4.0]), np.array([-1.0, -2.0]))["p_value"] == pytest.approx(1 / 6)


def test_constant_scores_give_nan_effect_size_and_p_one():
    s = np.zeros(3)
    assert math.isnan(effect_size_from_s(s, s))
    assert p_value_from_s(s, s)["p_value"] == 1.0  # every partition ties with the observed one


# ------------------------------------------------------------------------------------- files
def test_read_shared_tests(seat_dir):
    t = read_seat_test(seat_dir / "weat6.jsonl")
    assert t.name == "weat6" and t.lang == "en" and t.is_word_list
    assert [len(s.examples) for s in t.sets.values()] == [8, 8, 8, 8]
    assert t.sets["targ1"].category == "MaleNames" and t.sets["attr2"].category == "Family"
    st = read_seat_test(seat_dir / "sent-weat6.jsonl")
    assert not st.is_word_list and prepare_sentences(st)["targ1"] == st.sets["targ1"].examples
    names = [p.stem for p in resolve_tests([str(seat_dir)])]
    assert names.index("weat2") < names.index("weat10")  # numeric order, as sent-bias


def test_name_and_noun_templates_reproduce_sent_bias_sentences(seat_dir):
    """sent-bias's sent-weat6 was written with the same bleached templates for names and singular nouns."""
    words = read_seat_test(seat_dir / "weat6.jsonl")
    sents = read_seat_test(seat_dir / "sent-weat6.jsonl")
    assert bleach_terms(words.sets["targ1"].examples, "name", "en") == sents.sets["targ1"].examples
    ours = bleach_terms(["executive", "home", "parent"], "noun", "en")
    theirs = set(sents.sets["attr1"].examples) | set(sents.sets["attr2"].examples)
    assert set(ours) <= theirs and "An executive is a thing." in ours
    hi = bleach_terms(["राहुल"], "name", "hi")
    assert hi[0] == "यह राहुल है।" and all(s.endswith("।") for s in hi)
    with pytest.raises(BiaskitError, match="no bleached templates"):
        bleach_terms(["x"], "name", "fr")


def test_bleach_modes(seat_dir):
    t = read_seat_test(seat_dir / "weat6.jsonl")
    assert prepare_sentences(t, bleach="never")["targ1"] == t.sets["targ1"].examples
    auto = prepare_sentences(t)
    assert auto["targ1"][0] == "This is John." and len(auto["targ1"]) == 8 * 8  # names: 8 templates
    assert auto["attr1"][0] == "This is executive." and len(auto["attr1"]) == 8 * 3  # default kind: term
    forced = prepare_sentences(t, template="noun")
    assert forced["attr1"][0] == "This is an executive."
    with pytest.raises(BiaskitError, match="unknown bleach mode"):
        prepare_sentences(t, bleach="sometimes")


def test_reader_errors_and_dedup(tmp_path):
    def write(obj, name="t.jsonl"):
        p = tmp_path / name
        p.write_text(json.dumps(obj), encoding="utf-8")
        return p

    base = {k: {"category": k, "examples": ["a", "b", "c"]} for k in ("targ1", "targ2", "attr1", "attr2")}
    dup = json.loads(json.dumps(base))
    dup["targ1"]["examples"] = ["a", "b", "a", " b "]
    assert read_seat_test(write(dup)).sets["targ1"].examples == ["a", "b"]
    missing = {k: v for k, v in base.items() if k != "attr2"}
    with pytest.raises(InputError, match=r"t.jsonl, column 'attr2': missing or malformed 'attr2'.*Fix"):
        read_seat_test(write(missing))
    empty = json.loads(json.dumps(base))
    empty["attr1"]["examples"] = ["x", ""]
    with pytest.raises(InputError, match=r"attr1.examples\[2\] is empty"):
        read_seat_test(write(empty))
    one = json.loads(json.dumps(base))
    one["targ2"]["examples"] = ["x", "x"]
    with pytest.raises(InputError, match="1 distinct example"):
        read_seat_test(write(one))
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.jsonl, row 1: invalid JSON"):
        read_seat_test(bad)
    with pytest.raises(InputError, match="SEAT test not found"):
        resolve_tests(["no-such-test"])


# ------------------------------------------------------------------------------------- encoder
def test_encoder_pooling_matches_manual_and_is_cached(tiny_bert, tmp_path):
    import torch

    from biaskit.cache import DiskCache

    enc = Encoder.load(str(tiny_bert), device="cpu")
    texts = ["This is John.", "The person's name is Amy.", "Here is a long sentence with several more words in it."]
    for pooling in ("mean", "cls"):
        got = enc.encode(texts, pooling=pooling, batch_size=3)  # one padded batch
        for i, t in enumerate(texts):
            with torch.no_grad():
                h = enc.model(**enc.tokenizer(t, return_tensors="pt")).last_hidden_state[0]
            v = (h.mean(0) if pooling == "mean" else h[0]).numpy()
            assert got[i] == pytest.approx(v / np.linalg.norm(v), abs=1e-5)
    cache = DiskCache(tmp_path / "c.sqlite3", namespace="seat")
    calls = []
    hook = enc.model.register_forward_hook(lambda *a: calls.append(1))
    try:
        a = enc.encode(texts, cache=cache)
        assert calls
        calls.clear()
        b = enc.encode(texts, cache=cache)
        assert calls == [] and np.allclose(a, b)
    finally:
        hook.remove()


def test_run_seat_and_cli(tiny_bert, seat_dir, tmp_path, capsys):
    s = run_seat(
        SeatOptions(
            tests=[str(seat_dir / "weat6.jsonl")],
            models=[str(tiny_bert)],
            out=tmp_path / "o",
            bleach="never",
            device="cpu",
        )
    ).summary
    [r] = s["tests"]
    assert r["p_method"] == "exact" and r["n_partitions"] == math.comb(16, 8) and not r["bleached"]
    assert -2 < r["effect_size"] < 2 and 0 < r["p_value"] <= 1
    for f in ("results.csv", "summary.json", "report.md"):
        assert (tmp_path / "o" / f).stat().st_size > 0
    from biaskit.cli import main

    try:
        main(
            [
                "evaluate",
                "seat",
                "--test",
                "indibias-team/hi/team-gc1-men-upper-vs-lower-caste-pleasant-vs-unpleasant",
                "--test",
                str(seat_dir / "weat7.jsonl"),
                "--model",
                str(tiny_bert),
                "--out",
                str(tmp_path / "c"),
                "--n-samples",
                "2000",
                "--device",
                "cpu",
                "--protocol",
                "none",
            ]
        )  # two papers' tests: one setup
        code = 0
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    assert code == 0, out.err
    rows = json.loads((tmp_path / "c" / "summary.json").read_text())["tests"]
    assert [r["lang"] for r in rows] == ["hi", "en"] and rows[0]["bleached"] and rows[0]["p_method"] == "sampled"
    assert rows[0]["templates"] == {"targ1": "person", "targ2": "person", "attr1": "term", "attr2": "term"}
    assert rows[0]["n_targ1"] == 6 * 5 and rows[1]["n_targ1"] == 8 * 3
    try:
        main(["evaluate", "seat", "--test", "nope", "--model", str(tiny_bert), "--out", str(tmp_path / "d")])
        code = 0
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and "SEAT test not found" in err and "Traceback" not in err
