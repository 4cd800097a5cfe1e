"""CEAT (Guo & Caliskan 2021) and ILPS (Kurita et al. 2019) against hand transcriptions of their
formulas, and `evaluate correlate --protocol cao2022` running Cao et al. 2022's intrinsic metrics."""

from __future__ import annotations

import json
import math
import random
import shutil
import string
from pathlib import Path

import numpy as np
import pytest
import torch
from biaskit.evaluation.ceat import find_contexts, random_effects, run_ceat, window
from biaskit.evaluation.ilps import Item, ilps_scores, run_ilps
from biaskit.evaluation.options import CatsOptions, CeatOptions, IlpsOptions
from ceat_inputs import GROUPS, SENTENCES
from conftest import run_cli
from fixtures_models import build_tiny_bert


# ------------------------------------------------------------------------------------ random effects
def hand_random_effects(es, v):
    """Guo & Caliskan's combination, written out (weiguowilliam/CEAT code/ceat.py ceat_meta)."""
    w = [1 / x for x in v]
    q = sum(wi * e * e for wi, e in zip(w, es, strict=False)) - sum(
        wi * e for wi, e in zip(w, es, strict=False)
    ) ** 2 / sum(w)
    df = len(es) - 1
    tau2 = (q - df) / (sum(w) - sum(wi * wi for wi in w) / sum(w)) if q > df else 0.0
    ws = [1 / (x + tau2) for x in v]
    ces = sum(wi * e for wi, e in zip(ws, es, strict=False)) / sum(ws)
    var = 1 / sum(ws)
    z = ces / math.sqrt(var)
    return ces, var, tau2, 0.5 * math.erfc(z / math.sqrt(2))  # 1 - Phi(z)


@pytest.mark.parametrize("seed,spread", [(0, 0.05), (1, 1.5), (2, 0.0)])
def test_random_effects_equals_a_hand_transcription(seed, spread):
    rng = random.Random(seed)
    es = [0.3 + spread * rng.uniform(-1, 1) for _ in range(40)]
    v = [rng.uniform(0.01, 0.2) for _ in range(40)]
    r = random_effects(es, v)
    ces, var, tau2, p = hand_random_effects(es, v)
    assert r["ces"] == pytest.approx(ces, rel=1e-12) and r["variance"] == pytest.approx(var, rel=1e-12)
    assert r["tau2"] == pytest.approx(tau2, abs=1e-15) and r["p_value"] == pytest.approx(p, rel=1e-9)
    assert (r["tau2"] > 0) == (spread > 0.5)  # heterogeneous samples get a between-sample variance


# ------------------------------------------------------------------------------------------- contexts
def short_sen(words, idx):
    """The reference's short_sen (generate_ebd_bert.py), on a word list and the term's index."""
    if len(words) >= 9:
        if idx < 4:
            return words[:9]
        if len(words) - idx - 1 < 4:
            return words[-9:]
        return words[idx - 4 : idx + 4]
    return words


def test_the_window_is_the_references():
    words = [f"w{i}" for i in range(15)]
    for idx in range(15):
        kept, j = window(words, idx)
        assert kept == short_sen(words, idx) and kept[j] == words[idx], idx
    assert window(words[:5], 2) == (words[:5], 2)


CORPUS = [*SENTENCES, "one two three four five six seven man eight nine ten eleven happy."]


@pytest.fixture
def corpus(tmp_path) -> Path:
    p = tmp_path / "corpus.txt"
    p.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    return p


def hand_contexts(term):
    out = []
    for line in CORPUS:
        words = line.split()
        bare = [w.strip(string.punctuation) for w in words]
        if term not in bare:
            continue
        idx = bare.index(term)
        kept = short_sen(words, idx)
        j = idx if len(words) < 9 or idx < 4 else (idx - (len(words) - 9) if len(words) - idx - 1 < 4 else 4)
        text = " ".join(kept)
        start = len(" ".join(kept[:j])) + (1 if j else 0)
        out.append((text, start, start + len(term)))
    return out


def test_contexts_are_found_as_the_reference(corpus):
    ctx = find_contexts(corpus, ["man", "woman", "Sikh", "happy"])
    for t in ("man", "woman", "happy"):
        assert ctx[t] == hand_contexts(t), t
    assert ctx["Sikh"] == [] and ctx["man"][-1][0] == "four five six seven man eight nine ten"


def hand_embeddings(model, tok, term):
    """The last layer at the term's last word piece, the window fed without special tokens."""
    vecs = []
    for text, a, b in hand_contexts(term):
        enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
        last = max(i for i, (s, e) in enumerate(enc["offset_mapping"]) if e > s and s < b and e > a)
        with torch.no_grad():
            h = model(input_ids=torch.tensor([enc["input_ids"]])).last_hidden_state[0, last]
        vecs.append(h.double().numpy())
    return vecs


def _cos(u, v):
    return float(np.dot(u, v) / math.sqrt(np.dot(u, u) * np.dot(v, v)))


def hand_ceat_group(embs, G, A, B, n, seed):
    """Single-category CEAT by plain loops, with draws in biaskit's documented order (per set, per word:
    rng.integers(contexts, size=n))."""
    rng = np.random.default_rng(seed)
    idx = [[rng.integers(len(embs[w]), size=n) for w in s] for s in (G, A, B)]
    es, v = [], []
    for i in range(n):
        g, a, b = (
            [embs[w][ix[i]] for w, ix in zip(s, ixs, strict=False)] for s, ixs in zip((G, A, B), idx, strict=False)
        )
        e_i, v_i = [], []
        for gv in g:
            ca, cb = [_cos(gv, x) for x in a], [_cos(gv, x) for x in b]
            allc = ca + cb
            m = sum(allc) / len(allc)
            sd = math.sqrt(sum((c - m) ** 2 for c in allc) / (len(allc) - 1))
            e_i.append((sum(ca) / len(ca) - sum(cb) / len(cb)) / sd)
            v_i.append(sd * sd)
        es.append(sum(e_i) / len(e_i))
        v.append(sum(v_i) / len(v_i))
    return hand_random_effects(es, v)


def test_group_ceat_equals_a_hand_loop(tiny_bert, corpus, tmp_path):
    from transformers import AutoModel, AutoTokenizer

    gfile = tmp_path / "groups.json"
    gfile.write_text(json.dumps(GROUPS))
    s = run_ceat(
        CeatOptions(model=str(tiny_bert), corpus=[corpus], out=tmp_path / "o", groups=gfile, n_samples=60, seed=5),
        cache=False,
    ).summary
    model, tok = AutoModel.from_pretrained(tiny_bert).eval(), AutoTokenizer.from_pretrained(tiny_bert)
    words = ["man", "woman", "Hindu", "Muslim", "love", "peace", "happy", "kill", "ugly", "filth"]
    embs = {w: hand_embeddings(model, tok, w) for w in words}
    got = {r["group"]: r for r in s["results"]}
    assert set(got) == {"man", "woman", "Hindu", "Muslim"} and s["dropped_words"] == ["Sikh"]
    for g in got:
        ces, var, tau2, p = hand_ceat_group(embs, [g], GROUPS["attributes"]["A"], GROUPS["attributes"]["B"], 60, 5)
        assert got[g]["ces"] == pytest.approx(ces, abs=1e-6) and got[g]["p_value"] == pytest.approx(p, abs=1e-6)
    rows = [line.split(",") for line in (tmp_path / "o" / "groups.csv").read_text().splitlines()]
    assert rows[0][:4] == ["domain", "group", "metric", "score"] and len(rows) == 5
    assert "Sikh" in (tmp_path / "o" / "report.md").read_text()


def test_two_target_ceat_equals_a_hand_loop(tiny_bert, corpus, tmp_path):
    from transformers import AutoModel, AutoTokenizer

    test = tmp_path / "t.jsonl"
    X, Y, A, B = ["man", "Hindu"], ["woman", "Muslim"], ["love", "peace", "happy"], ["kill", "ugly", "filth"]
    test.write_text(
        json.dumps(
            {
                k: {"category": k, "examples": v}
                for k, v in zip(("targ1", "targ2", "attr1", "attr2"), (X, Y, A, B), strict=False)
            }
        )
    )
    s = run_ceat(
        CeatOptions(model=str(tiny_bert), corpus=[corpus], out=tmp_path / "o", tests=[str(test)], n_samples=40, seed=2),
        cache=False,
    ).summary
    model, tok = AutoModel.from_pretrained(tiny_bert).eval(), AutoTokenizer.from_pretrained(tiny_bert)
    embs = {w: hand_embeddings(model, tok, w) for w in X + Y + A + B}
    rng = np.random.default_rng(2)
    idx = [[rng.integers(len(embs[w]), size=40) for w in st] for st in (X, Y, A, B)]
    es, v = [], []
    for i in range(40):
        x, y, a, b = (
            [embs[w][ix[i]] for w, ix in zip(st, ixs, strict=False)] for st, ixs in zip((X, Y, A, B), idx, strict=False)
        )
        sw = [sum(_cos(t, u) for u in a) / len(a) - sum(_cos(t, u) for u in b) / len(b) for t in x + y]
        m = sum(sw) / len(sw)
        sd = math.sqrt(sum((q - m) ** 2 for q in sw) / (len(sw) - 1))
        es.append((sum(sw[: len(x)]) / len(x) - sum(sw[len(x) :]) / len(y)) / sd)
        v.append(sd * sd)
    ces, var, tau2, p = hand_random_effects(es, v)
    assert s["results"][0]["ces"] == pytest.approx(ces, abs=1e-6) and s["results"][0]["pes"] == pytest.approx(
        sum(es) / len(es), abs=1e-6
    )


def test_ceat_refuses_a_corpus_without_the_attribute_words(tiny_bert, tmp_path, capsys):
    p = tmp_path / "c.txt"
    p.write_text("The man is here.\nThe woman is there.\n")
    code, _, err = run_cli(
        [
            "evaluate",
            "ceat",
            "-m",
            str(tiny_bert),
            "--corpus",
            str(p),
            "--out",
            str(tmp_path / "o"),
            "--n-samples",
            "10",
        ],
        capsys,
    )
    assert code == 2 and "c.txt" in err and len(err.strip().splitlines()) == 1


# ----------------------------------------------------------------------------------------------- ILPS
def hand_ilps(model, tok, template, target, attribute, predict):
    """log p(word | the other filled in) - log p(word | the other one [MASK]), every piece of the scored
    word masked, by hand from the filled sentence's character offsets."""
    text = template.format(target=target, attribute=attribute)
    t0 = template.index("{target}")
    a0 = template.index("{attribute}")
    ts = t0 if t0 < a0 else t0 + len(attribute) - len("{attribute}")
    as_ = a0 if a0 < t0 else a0 + len(target) - len("{target}")
    spans = {"target": (ts, ts + len(target)), "attribute": (as_, as_ + len(attribute))}
    enc = tok(text, return_offsets_mapping=True)
    pieces = {
        k: [i for i, (s, e) in enumerate(enc["offset_mapping"]) if e > s and s < b and e > a]
        for k, (a, b) in spans.items()
    }
    scored, other = (
        (pieces["target"], pieces["attribute"]) if predict == "target" else (pieces["attribute"], pieces["target"])
    )
    ids = list(enc["input_ids"])
    m = tok.mask_token_id

    def logp(x, pos, tgt):
        with torch.no_grad():
            lp = torch.log_softmax(model(input_ids=torch.tensor([x])).logits[0], -1)
        return sum(lp[p, t].item() for p, t in zip(pos, tgt, strict=False))

    masked = [m if i in scored else v for i, v in enumerate(ids)]
    full = logp(masked, scored, [ids[i] for i in scored])
    prior = []
    for i, v in enumerate(masked):
        if i in other[1:]:
            continue
        prior.append(m if i == other[0] else v)
    shift = len(other) - 1 if other[0] < scored[0] else 0
    return full - logp(prior, [i - shift for i in scored], [ids[i] for i in scored])


@pytest.mark.parametrize("predict", ["target", "attribute"])
def test_ilps_equals_a_hand_loop(predict, tiny_bert):
    from biaskit.evaluation.models import load_lm
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    lm = load_lm(tiny_bert, device="cpu")
    items = [
        Item("{target} is {attribute}.", "woman", "happy"),
        Item("{target} is {attribute}.", "transgender", "kind"),
        Item("The {attribute} one is the {target}.", "Buddhist", "unpleasantness"),
    ]
    tok = AutoTokenizer.from_pretrained(tiny_bert)
    assert any(len(tok.tokenize(w)) > 1 for w in ("transgender", "Buddhist", "unpleasantness"))  # multi-piece words
    got = ilps_scores(lm, items, predict=predict, cache=None)
    model = AutoModelForMaskedLM.from_pretrained(tiny_bert).eval()
    for it, g in zip(items, got, strict=False):
        assert g == pytest.approx(hand_ilps(model, tok, it.template, it.target, it.attribute, predict), abs=1e-5)


def test_ilps_groups_and_report(tiny_bert, tmp_path):
    gfile = tmp_path / "groups.json"
    gfile.write_text(json.dumps(GROUPS))
    s = run_ilps(IlpsOptions(model=str(tiny_bert), out=tmp_path / "o", groups=gfile), cache=False).summary
    rows = {(r["group"], r["metric"]): r["score"] for r in s["groups"]}
    assert len(rows) == 5 * 3 and rows[("man", "A-B")] == pytest.approx(rows[("man", "A")] - rows[("man", "B")])
    assert s["predict"] == "target" and s["protocol"]["name"] == "none"
    s = run_ilps(
        IlpsOptions(model=str(tiny_bert), out=tmp_path / "c", groups=gfile, protocol="cao2022"), cache=False
    ).summary
    assert s["predict"] == "attribute" and s["protocol"]["name"] == "cao2022" and s["protocol"]["follows_protocol"]


# -------------------------------------------------------------------------------------- correlate cao2022
CATS = [
    (
        "intrasentence",
        "mother",
        "gender",
        "My mother is very BLANK.",
        "My mother is very caring.",
        "My mother is very lazy.",
        "My mother is very blue.",
    ),
    (
        "intrasentence",
        "Muslim",
        "religion",
        "The Muslim man was BLANK.",
        "The Muslim man was violent.",
        "The Muslim man was kind.",
        "The Muslim man was purple.",
    ),
    (
        "intrasentence",
        "schoolboy",
        "gender",
        "The schoolboy was BLANK.",
        "The schoolboy was rowdy.",
        "The schoolboy was quiet.",
        "The schoolboy was soup.",
    ),
    (
        "intrasentence",
        "Hindu",
        "religion",
        "The Hindu woman was BLANK.",
        "The Hindu woman was devout.",
        "The Hindu woman was atheist.",
        "The Hindu woman was metal.",
    ),
    ("intersentence", "Hindu", "religion", "He is a Hindu.", "He prays a lot.", "He never prays.", "Cats fly."),
]


@pytest.fixture(scope="module")
def three_berts(tmp_path_factory):
    """Three tiny BERTs in folders named m0, m1, m2 (the names the extrinsic file uses)."""
    root = tmp_path_factory.mktemp("three")
    out = []
    for k in range(3):
        d = build_tiny_bert(root / f"b{k}", seed=k)
        shutil.move(str(d), str(root / f"m{k}"))
        out.append(root / f"m{k}")
    return out


def test_correlate_cao2022_runs_and_checks_the_papers_metrics(three_berts, tmp_path, capsys):
    cats = tmp_path / "cats.jsonl"
    cats.write_text(
        "".join(
            json.dumps(
                {
                    "type": sp,
                    "target": t,
                    "bias_type": bt,
                    "context": c,
                    "stereotype": st,
                    "anti-stereotype": an,
                    "unrelated": un,
                }
            )
            + "\n"
            for sp, t, bt, c, st, an, un in CATS
        )
    )
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(CORPUS) + "\n")
    ext = tmp_path / "ext.csv"
    rows = ["model,domain,group,metric,score"] + [
        f"m{k},{d},{g},fpr,{0.1 + 0.07 * k * j + 0.01 * j}"
        for k in range(3)
        for d, gs in (("gender", ("man", "woman")), ("religion", ("hindu", "muslim")))
        for j, g in enumerate(gs)
    ]
    ext.write_text("\n".join(rows) + "\n")
    out = tmp_path / "corr"
    args = [
        "evaluate",
        "correlate",
        "--protocol",
        "cao2022",
        "--cats",
        str(cats),
        "--corpus",
        str(corpus),
        "--extrinsic",
        str(ext),
        "--no-plots",
        "--out",
        str(out),
    ]
    for m in three_berts:
        args += ["--model", str(m)]
    code, stdout, err = run_cli(args, capsys)
    assert code == 0, err
    s = json.loads((out / "summary.json").read_text())
    assert s["protocol"]["name"] == "cao2022" and s["headline"] == "pearson" and s["protocol"]["follows_protocol"]
    intr = tmp_path / "corr-intrinsic"
    for k in range(3):
        st = json.loads((intr / f"m{k}" / "stereoset" / "summary.json").read_text())
        assert st["data"]["split"] == "intrasentence" and st["cat_mode"] == "pll"  # Cao et al. §2
        assert json.loads((intr / f"m{k}" / "ceat" / "summary.json").read_text())["n_samples"] == 10_000
        assert json.loads((intr / f"m{k}" / "ilps" / "summary.json").read_text())["predict"] == "attribute"
    metrics = {r["intrinsic"] for r in s["correlations"]}
    assert {"ceat:ces", "ilps:A", "ilps:B", "ilps:A-B", "stereoset:ss"} <= metrics
    assert all(r["n_models"] == 3 for r in s["correlations"] if r["domain"] == "gender")
    assert "Pearson's r is the paper's figure" in (out / "report.md").read_text()
    # a StereoSet folder run otherwise is refused with the command that fixes it
    from biaskit.evaluation.stereoset import run_cats

    run_cats(CatsOptions(data=cats, models=[str(three_berts[0])], out=tmp_path / "ss-both"), cache=False)
    code, _, err = run_cli(
        [
            "evaluate",
            "correlate",
            "--protocol",
            "cao2022",
            "-r",
            str(tmp_path / "ss-both"),
            "-r",
            str(intr / "m1" / "ceat"),
            "-r",
            str(intr / "m2" / "ceat"),
            "--extrinsic",
            str(ext),
            "--out",
            str(tmp_path / "x"),
        ],
        capsys,
    )
    assert code == 2 and "--split intrasentence --cat-mode pll" in err and len(err.strip().splitlines()) == 1
    # folders lacking a metric of the paper's set are listed as deviations
    code, _, err = run_cli(
        [
            "evaluate",
            "correlate",
            "--protocol",
            "cao2022",
            "-r",
            str(intr / "m0" / "ceat"),
            "-r",
            str(intr / "m1" / "ceat"),
            "-r",
            str(intr / "m2" / "ceat"),
            "--extrinsic",
            str(ext),
            "--no-plots",
            "--out",
            str(tmp_path / "y"),
        ],
        capsys,
    )
    assert code == 0, err
    devs = json.loads((tmp_path / "y" / "summary.json").read_text())["protocol"]["deviations"]
    assert len(devs) == 3 and all("lacks ilps, stereoset" in d["text"] for d in devs)
