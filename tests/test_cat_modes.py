"""StereoSet scoring modes: pseudo-likelihood (ACL 2021 Table 5) and the reference ENSEMBLE.

Expected values come from plain loops written from the paper's sentences (one masked input at a time,
one causal forward per text) and from a transcription of moinnadeem/StereoSet's eval_ensemble.py
loop (pairs (0,1), (1,2), (2,0))."""

from __future__ import annotations

import json

import pytest
import torch
from biaskit.evaluation.cat_modes import ENSEMBLE_WEIGHTS, ensemble_scores
from biaskit.evaluation.models import load_lm
from biaskit.evaluation.options import CatsOptions
from biaskit.evaluation.stereoset import run_cats, score_cats
from conftest import run_cli
from test_cats_scoring import INTER, INTRA, _manual_clm

torch.set_num_threads(1)


def _mask_sum(lm, ids: list[int], positions) -> float:
    tok, model = lm.tokenizer, lm.model
    total = 0.0
    for i in positions:
        x = list(ids)
        x[i] = tok.mask_token_id
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([x])).logits[0, i]
        total += float(torch.log_softmax(logits, -1)[ids[i]])
    return total


def test_mlm_pll_intrasentence_masks_every_context_token_not_the_fill(tiny_bert):
    lm = load_lm(tiny_bert)
    got = {s.sentence_id: s for s in score_cats(INTRA[:2], lm, batch_size=5, mode="pll")}
    fills = {"camels", "skateboards", "hair", "middle-aged", "young", "purple"}
    for c in INTRA[:2]:
        prefix, _, rest = c.context.partition("BLANK")
        for o in c.options:
            fill = next(f for f in fills if f in o.sentence)
            ids = lm.tokenizer(prefix + fill + rest)["input_ids"]
            start = len(lm.tokenizer(prefix, add_special_tokens=False)["input_ids"]) + 1  # + [CLS]
            end = len(lm.tokenizer(prefix + fill, add_special_tokens=False)["input_ids"]) + 1
            context_pos = [i for i in range(1, len(ids) - 1) if not start <= i < end]
            s = got[o.sentence_id]
            assert s.method == "mlm-pll-context" and len(s.logprobs) == len(context_pos)
            assert s.score == pytest.approx(_mask_sum(lm, ids, context_pos), abs=1e-4)


def test_mlm_pll_intersentence_masks_the_context_given_the_option(tiny_bert):
    lm = load_lm(tiny_bert)  # no NSP head: pll mode does not need one
    got = score_cats(INTER, lm, batch_size=4, mode="pll")
    for s, (c, o) in zip(got, [(cat, opt) for cat in INTER for opt in cat.options], strict=True):
        ctx = c.context if c.context.endswith(".") else c.context + "."
        ids = lm.tokenizer(f"{ctx} {o.sentence}")["input_ids"]
        n_ctx = len(lm.tokenizer(ctx, add_special_tokens=False)["input_ids"])
        assert s.method == "mlm-pll-context|sentence" and len(s.logprobs) == n_ctx
        assert s.score == pytest.approx(_mask_sum(lm, ids, range(1, 1 + n_ctx)), abs=1e-4)


def test_clm_pll_intersentence_is_the_log_ratio_with_and_without_context(tiny_gpt2):
    lm = load_lm(tiny_gpt2)
    got = {s.sentence_id: s for s in score_cats(INTRA[:1] + INTER, lm, batch_size=3, mode="pll")}
    likelihood = {s.sentence_id: s for s in score_cats(INTRA[:1], lm, batch_size=3)}
    for c in INTER:
        ctx = c.context if c.context.endswith(".") else c.context + "."
        for o in c.options:
            exp = sum(_manual_clm(lm, f"{ctx} {o.sentence}", len(ctx))) - sum(_manual_clm(lm, o.sentence))
            assert got[o.sentence_id].method == "clm-pll-ratio"
            assert got[o.sentence_id].score == pytest.approx(exp, abs=1e-4)
    for o in INTRA[0].options:  # intrasentence: the full sentence, as likelihood scoring
        assert got[o.sentence_id].score == pytest.approx(likelihood[o.sentence_id].score, rel=1e-9)


def _reference_ensemble(cats, runs, weights):
    """Transcription of eval_ensemble.py's loop (its model names replaced by the runs' kinds)."""
    pred = {}
    for c in cats:
        sents = c.options
        for a, b in [(0, 1), (1, 2), (2, 0)]:
            for kind, v in runs:
                ida, idb = sents[a].sentence_id, sents[b].sentence_id
                pa, pb = v[ida], v[idb]
                pred.setdefault(ida, 0)
                pred.setdefault(idb, 0)
                w = weights[(kind, c.split)]
                if pa == pb:
                    pass
                elif pa > pb:
                    pred[ida] += w * pa
                else:
                    pred[idb] += w * pb
    return pred


def test_ensemble_follows_the_reference_loop():
    cats = [INTRA[0], INTER[0]]
    ids = [o.sentence_id for c in cats for o in c.options]
    bert = dict(zip(ids, [0.2, 0.5, 0.1, 0.9, 0.3, 0.3], strict=False))
    gpt_m = dict(zip(ids, [0.01, 0.002, 0.003, 0.4, 0.6, 0.1], strict=False))
    gpt_l = dict(zip(ids, [0.004, 0.004, 0.001, 0.7, 0.2, 0.25], strict=False))
    runs = [("mlm", bert), ("clm", gpt_m), ("clm", gpt_l)]
    got = ensemble_scores(cats, runs)
    exp = _reference_ensemble(cats, runs, ENSEMBLE_WEIGHTS)
    assert got.keys() == exp.keys() and all(got[k] == pytest.approx(exp[k], rel=1e-12) for k in exp)
    # by hand for the intrasentence CAT: pairs (s,a): bert a 0.5, gm s .01, gl tie; (a,u): bert a .5,
    # gm u .003, gl a .004; (s,u): bert s .2, gm s .01, gl s .004
    s, a, u = ids[:3]
    assert got[s] == pytest.approx(1 * 0.2 + 10000 * (0.01 + 0.01 + 0.004))
    assert got[a] == pytest.approx(1 * (0.5 + 0.5) + 10000 * 0.004)
    assert got[u] == pytest.approx(10000 * 0.003)


def test_cli_cat_mode_pll_scores_intersentence_without_nsp(tiny_bert, stereoset_jsonl, tmp_path, capsys):
    code, out, err = run_cli(
        [
            "evaluate",
            "cats",
            "--data",
            str(stereoset_jsonl),
            "--model",
            str(tiny_bert),
            "--scorer",
            "mlm",
            "--cat-mode",
            "pll",
            "--limit",
            "6",
            "--out",
            str(tmp_path / "o"),
            "-q",
        ],
        capsys,
    )
    assert code == 0, err
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert s["cat_mode"] == "pll" and not s["skipped"] and s["piece_agg"] is None
    assert set(s["methods"]) == {"mlm-pll-context", "mlm-pll-context|sentence"}
    direct = run_cats(
        CatsOptions(
            data=stereoset_jsonl, models=[str(tiny_bert)], out=tmp_path / "d", scorer="mlm", limit=6, cat_mode="pll"
        )
    ).summary
    assert direct["overall"] == s["overall"]
