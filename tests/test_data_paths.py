"""No data value reaches a path unchecked (issue 20): the one gate, ``biaskit.paths.safe_component``,
and the labels made safe by ``slug_component`` (a model path, a correlation's domain). The fuzz rows
per path-forming field and the outside-``--out`` check of every command are in tests/test_fuzz_cli.py."""

from __future__ import annotations

import pytest

from biaskit.errors import InputError
from biaskit.paths import component_problem, safe_component, slug_component

REFUSED = {
    "x/../../../../escaped": "'/'",
    "e\u200bn": "ZERO WIDTH SPACE",
    "en\u202e": "RIGHT-TO-LEFT OVERRIDE",
    "h" * 300: "300 characters",
    "..": "starts with '.'",
    ".hidden": "starts with '.'",
    "a\\b": "'\\'",
    "": "empty",
    "a b": "SPACE",
    "tab\there": "U+0009",
    "nul\x00": "U+0000",
}


@pytest.mark.parametrize("value", list(REFUSED), ids=list(REFUSED.values()))
def test_unsafe_values_are_refused_with_their_file_and_row(value):
    with pytest.raises(InputError) as e:
        safe_component(value, what="language code", path="pairs.jsonl", row=7, column="lang")
    msg = str(e.value)
    assert msg.startswith("pairs.jsonl, row 7, column 'lang': language code"), msg
    assert REFUSED[value] in msg and "Fix:" in msg


@pytest.mark.parametrize(
    "value",
    [
        "en",
        "hi",
        "hi-Latn",
        "zh_Hant",
        "pt-BR",
        "crows_pairs_anonymized.csv",
        "a" * 64,
        "heilman_double_bind_competent_1+3-.jsonl",
    ],
)
def test_safe_values_pass_unchanged(value):
    assert component_problem(value) is None
    assert safe_component(value) == value


@pytest.mark.parametrize("value", ["मुसलमान", "e\u0301", "caf\u00e9", "C:", "a@b"])
def test_only_portable_ascii_names_are_file_names(value):
    """Letters outside ASCII (in any normal form), ':' and '@' are refused: the names must work on every
    file system and on the Hugging Face Hub ('+' does: sent-bias' file names have it)."""
    assert "holds" in component_problem(value)


@pytest.mark.parametrize(
    "label,expected",
    [
        ("runs/a/model name", "runs-a-model-name"),
        ("../../etc", "etc"),
        ("\u202e", "x"),
        ("caste\u200b/x", "caste-x"),
        ("a" * 200, "a" * 80),
    ],
)
def test_slugs_are_always_safe(label, expected):
    assert slug_component(label) == expected
    assert component_problem(slug_component(label), max_len=80) is None


def test_a_model_path_or_a_domain_name_stays_inside_the_output_folder(tmp_path):
    """``evaluate pairs`` names a model's folder after the model, ``evaluate correlate`` a plot after
    the domain: hostile labels give file names inside the output folder."""
    import pandas as pd
    from biaskit.evaluation.correlate import scatter_plots
    from biaskit.evaluation.pairs import model_slug

    assert "/" not in model_slug("x/../../../../escaped") and model_slug("..") == "model"
    out = tmp_path / "out" / "plots"
    dom = "x/../../../../escaped\u202e"
    variances = pd.DataFrame(
        {
            "domain": [dom] * 3,
            "intrinsic": ["ss"] * 3,
            "extrinsic": ["tpr"] * 3,
            "model": ["m0", "m1", "m2"],
            "var_intrinsic": [1.0, 2.0, 3.0],
            "var_extrinsic": [1.0, 3.0, 2.0],
        }
    )
    corrs = pd.DataFrame(
        {
            "domain": [dom],
            "intrinsic": ["ss"],
            "extrinsic": ["tpr"],
            "models": [["m0", "m1", "m2"]],
            "pearson_r": [0.5],
            "spearman_rho": [0.5],
            "note": [""],
        }
    )
    paths = scatter_plots(variances, corrs, out)
    assert len(paths) == 1 and paths[0].parent == out, paths
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == [paths[0].name]


def test_a_release_refuses_a_hostile_language_code_naming_the_row(tmp_path):
    import json

    from biaskit.release import BuildOptions, build_release

    rec = {
        "sent_more": "Women are bad drivers.",
        "sent_less": "Men are bad drivers.",
        "direction": "stereo",
        "bias_type": "gender",
        "lang": "x/../../../../escaped",
    }
    src = tmp_path / "in" / "pairs.jsonl"
    src.parent.mkdir()
    src.write_text(json.dumps({**rec, "lang": "en"}) + "\n" + json.dumps(rec) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        build_release([src], tmp_path / "out" / "rel", BuildOptions(name="x", version="1.0.0", plots=False))
    assert f"{src}, row 2, column 'lang'" in str(e.value)
    assert not list(tmp_path.rglob("escaped*")) and not (tmp_path / "out").exists()
