"""StereoSet intersentence CATs scored by a next-sentence head in the reference code's format.

A head file is saved here from tiny models exactly as the reference's ``ModelNSP`` under
``DataParallel`` saves it (``module.core_model.*`` + ``module.nsp_head.{0,1,2}.*``); the expected
scores come from a plain loop written from ``code/models/models.py`` (``ModelNSP.forward``) and
``code/intersentence_loader.py`` (the inputs), not from biaskit's module.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from biaskit.evaluation.nsp_head import reference_next_label
from biaskit.evaluation.options import CatsOptions
from biaskit.evaluation.stereoset import run_cats
from conftest import run_cli

from biaskit.readers import read_cats


def _head_file(core, path: Path, *, seed: int = 0, extra_row: bool = False) -> tuple[Path, torch.nn.Module]:
    """Save core + a 3-layer head (hidden -> 300 -> 300 -> 2) as the reference's DataParallel state dict."""
    if extra_row:  # the reference added a <PAD> token to GPT-2's vocabulary before training
        core.resize_token_embeddings(core.get_input_embeddings().weight.shape[0] + 1, mean_resizing=False)
    torch.manual_seed(seed)
    h = core.config.hidden_size if hasattr(core.config, "hidden_size") else core.config.d_model
    head = torch.nn.Sequential(torch.nn.Linear(h, 300), torch.nn.Linear(300, 300), torch.nn.Linear(300, 2))
    with torch.no_grad():
        for p in core.parameters():  # a "fine-tuned" core: the file's weights must replace the pretrained ones
            p.add_(0.01 * torch.randn_like(p))
    state = {f"module.core_model.{k}": v for k, v in core.state_dict().items()}
    state.update({f"module.nsp_head.{k}": v for k, v in head.state_dict().items()})
    torch.save(state, path)
    return path, head


def _hand_scores(family: str, core, head, tok, cats, label: int) -> dict[str, float]:
    """P(is next) of every option by hand (reference inputs and ModelNSP.forward)."""
    out = {}
    core.eval()
    for c in cats:
        for o in c.options:
            a = tok(c.context, add_special_tokens=False)["input_ids"]
            b = tok(o.sentence, add_special_tokens=False)["input_ids"]
            cls_, sep = tok.cls_token_id, tok.sep_token_id
            if family == "gpt2":
                ids, types = a + b, None
            elif family == "bert":
                ids = [cls_] + a + [sep] + b + [sep]
            elif family == "roberta":
                ids = [cls_] + a + [sep, sep] + b + [sep]
            else:
                ids = a + [sep] + b + [sep, cls_]
            if family != "gpt2":
                first = ids.index(sep)
                types = [0 if i <= first else 1 for i in range(len(ids))]
            with torch.no_grad():
                x = torch.tensor([ids])
                if family in ("gpt2", "roberta"):
                    res = core(input_ids=x)
                else:
                    res = core(input_ids=x, token_type_ids=torch.tensor([types]))
                if family == "gpt2":
                    v = res.last_hidden_state.mean(dim=1)
                elif family == "xlnet":
                    v = res.last_hidden_state[:, 0, :]
                else:
                    v = res.pooler_output
                v = head[2](head[1](head[0](v)))
                out[o.sentence_id] = torch.softmax(v, dim=-1)[0, label].item()
    return out


def _roberta_dir(tiny_xlmr: Path, dest: Path, kind: str) -> Path:
    """A tiny RoBERTa or XLNet folder (random weights) with the tiny XLM-R tokenizer."""
    from transformers import AutoTokenizer, RobertaConfig, RobertaForMaskedLM, XLNetConfig, XLNetLMHeadModel

    tok = AutoTokenizer.from_pretrained(tiny_xlmr)
    torch.manual_seed(1)
    if kind == "roberta":
        m = RobertaForMaskedLM(
            RobertaConfig(
                vocab_size=len(tok),
                hidden_size=32,
                num_hidden_layers=2,
                num_attention_heads=2,
                intermediate_size=64,
                max_position_embeddings=300,
                pad_token_id=tok.pad_token_id,
            )
        )
    else:
        m = XLNetLMHeadModel(
            XLNetConfig(vocab_size=len(tok), d_model=32, n_layer=2, n_head=2, d_inner=64, pad_token_id=tok.pad_token_id)
        )
    m.save_pretrained(dest)
    tok.save_pretrained(dest)
    return dest


@pytest.mark.parametrize("family", ["gpt2", "bert", "roberta", "xlnet"])
def test_a_reference_head_file_scores_as_a_hand_loop(
    family, tiny_gpt2, tiny_bert, tiny_xlmr, stereoset_jsonl, tmp_path
):
    from transformers import AutoModel, AutoTokenizer

    model_dir = {"gpt2": tiny_gpt2, "bert": tiny_bert}.get(family) or _roberta_dir(tiny_xlmr, tmp_path / family, family)
    name = {
        "gpt2": "GPT2Model_gpt2_0.0005.pth",
        "bert": "BertModel_bert-base-cased_1e-05.pth",
        "roberta": "RobertaModel_roberta-large_1e-05.pth",
        "xlnet": "XLNetModel_xlnet-base-cased_1e-05.pth",
    }[family]
    core = AutoModel.from_pretrained(model_dir)
    path, head = _head_file(core, tmp_path / name, extra_row=family == "gpt2")
    label = reference_next_label(path)
    assert label == (0 if family == "bert" else 1)
    cats = [c for c in read_cats(stereoset_jsonl, split="intersentence")][:3]
    want = _hand_scores(family, core, head, AutoTokenizer.from_pretrained(model_dir), cats, label)
    s = run_cats(
        CatsOptions(
            data=stereoset_jsonl,
            models=[str(model_dir)],
            out=tmp_path / "o",
            split="intersentence",
            limit=3,
            nsp_head=path,
        ),
        cache=False,
    ).summary
    got = {
        json.loads(x)["id"]: json.loads(x)["score"] for x in (tmp_path / "o" / "scores.jsonl").read_text().splitlines()
    }
    assert set(got) == set(want)
    for k in want:
        assert got[k] == pytest.approx(want[k], abs=1e-5), k
    assert s["methods"] == ["nsp"] and s["nsp_head"]["family"] == family and s["nsp_head"]["next_label"] == label
    assert s["protocol"]["name"] == "stereoset" and s["protocol"]["follows_protocol"]
    assert Path(s["nsp_head"]["path"]).name in (tmp_path / "o" / "report.md").read_text()


def test_the_reference_reads_the_is_next_output_from_the_file_name():
    assert reference_next_label("GPT2Model_gpt2-large_1e-05.pth") == 1
    assert reference_next_label("RobertaModel_roberta-base_1e-05.pth") == 0  # the reference's quirk
    assert reference_next_label("RobertaModel_roberta-large_1e-05.pth") == 1
    assert reference_next_label("XLNetModel_xlnet-large-cased_1e-05.pth") == 1
    assert reference_next_label("BertModel_bert-base-cased_1e-05.pth") == 0
    assert reference_next_label("my_head.pth") is None


def test_a_causal_lm_without_a_head_is_refused_under_the_protocol(tiny_gpt2, stereoset_jsonl, tmp_path, capsys):
    args = [
        "evaluate",
        "cats",
        "--data",
        str(stereoset_jsonl),
        "--model",
        str(tiny_gpt2),
        "--scorer",
        "clm",
        "--split",
        "intersentence",
        "--limit",
        "3",
        "-q",
    ]
    code, _, err = run_cli(args + ["--out", str(tmp_path / "a")], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "--nsp-head" in err and "--protocol none" in err and not (tmp_path / "a").exists()
    # --protocol none: the likelihood mode stays, labelled not comparable
    code, out, err = run_cli(args + ["--out", str(tmp_path / "b"), "--protocol", "none"], capsys)
    assert code == 0, err
    s = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert s["methods"] == ["clm-conditional"] and s["protocol"]["name"] == "none"
    assert "not comparable with the paper" in (tmp_path / "b" / "report.md").read_text()


def test_a_head_file_of_another_shape_or_name_is_one_line(tiny_gpt2, tiny_bert, stereoset_jsonl, tmp_path, capsys):
    from transformers import AutoModel

    path, _ = _head_file(AutoModel.from_pretrained(tiny_bert), tmp_path / "my_head.pth")
    capsys.readouterr()  # the loading bar of the line above
    base = ["evaluate", "cats", "--data", str(stereoset_jsonl), "--split", "intersentence", "--limit", "2", "-q"]
    # the file name does not say which output is "is next"
    code, _, err = run_cli(
        base + ["--model", str(tiny_bert), "--nsp-head", str(path), "--out", str(tmp_path / "a")], capsys
    )
    assert code == 2 and "--nsp-label" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(
        base + ["--model", str(tiny_bert), "--nsp-head", str(path), "--nsp-label", "0", "--out", str(tmp_path / "b")],
        capsys,
    )
    assert code == 0, err
    # a BERT head on a GPT-2: the head's core does not fit the model
    code, _, err = run_cli(
        base
        + [
            "--model",
            str(tiny_gpt2),
            "--scorer",
            "clm",
            "--nsp-head",
            str(path),
            "--nsp-label",
            "1",
            "--out",
            str(tmp_path / "c"),
        ],
        capsys,
    )
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    # not a state dict at all
    bad = tmp_path / "bad.pth"
    bad.write_text("not torch")
    code, _, err = run_cli(
        base + ["--model", str(tiny_bert), "--nsp-head", str(bad), "--out", str(tmp_path / "d")], capsys
    )
    assert code == 2 and "bad.pth" in err and "Traceback" not in err
