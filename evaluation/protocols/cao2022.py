"""``cao2022``: intrinsic vs extrinsic bias across models (Cao et al., ACL 2022)."""

from __future__ import annotations

from . import words as W
from .base import Protocol, Setting

PROTOCOL = Protocol(
    name="cao2022",
    title="Intrinsic vs extrinsic fairness metrics (Cao et al. 2022)",
    citation="Cao, Pruksachatkun, Chang, Gupta, Kumar, Dhamala & Galstyan (2022). On the Intrinsic and Extrinsic "
    "Fairness Evaluation Metrics for Contextualized Language Representations. ACL.",
    commands=("correlate", "cats", "ceat", "ilps"),
    origin="(no data of its own: a run names it)",
    settings=(
        Setting(
            "correlation",
            "pearson",
            "Cao et al. 2022 §3: the Pearson correlation coefficient across the models",
            "correlation",
            W.CORRELATION,
            command="correlate",
        ),
        Setting(
            "groups",
            "all",
            "Cao et al. 2022 §4.1: domain-level variance over all protected groups of each "
            "dataset (aligned groups only in the ablation)",
            "groups",
            W.GROUPS,
            command="correlate",
        ),
        Setting(
            "metrics",
            ("ceat", "ilps", "stereoset"),
            "Cao et al. 2022 §2: the intrinsic metrics CEAT, ILPS and StereoSet",
            "",
            {("ceat", "ilps", "stereoset"): "CEAT, ILPS and StereoSet"},
            command="correlate",
        ),
        Setting(
            "split",
            "intrasentence",
            "Cao et al. 2022 §2: 'We only focus on their intrasentence pairs'",
            "split",
            W.SPLIT,
            command="cats",
        ),
        Setting(
            "mode",
            "pll",
            "Cao et al. 2022 §2: the stereotyped sentence has a higher pseudo log-likelihood",
            "cat_mode",
            W.CAT_MODE,
            command="cats",
        ),
        Setting(
            "n_samples",
            10_000,
            "Cao et al. 2022 footnote 6 (the metric's own settings); CEAT reference code "
            "README (weiguowilliam/CEAT): N = 10000 samples",
            "n_samples",
            {10_000: "10,000 samples"},
            command="ceat",
        ),
        Setting(
            "predict",
            "attribute",
            "Cao et al. 2022 §2: the increase in probability of the attribute for the "
            "<mask> token given a protected group",
            "predict",
            W.PREDICT,
            command="ilps",
        ),
    ),
    # the options these notes name are those of `evaluate correlate | ceat`, which no pipeline stage runs:
    # spelled as those commands take them (the settings above are named where the user is)
    notes=(
        "Variance: §3 writes Var(s_group, ...) without saying population or sample; biaskit uses the population "
        "variance (--ddof 0).",
        "CEAT contexts: Guo & Caliskan (and so Cao et al.) drew sentences from Reddit comments; biaskit embeds the "
        "words in the corpus you pass (--corpus), so CEAT numbers depend on it.",
        "Group-level CEAT: Cao et al. give one effect size per protected group; biaskit computes the single-"
        "category effect size of each group's words against the two attribute sets inside CEAT's random-effects "
        "combination (our reading; the paper does not spell the formula out).",
        "ILPS templates: the paper does not list them; biaskit's default template is '[TARGET] is [ATTRIBUTE].' "
        "(the reference code's 'GGG is XXX'), and --template adds others.",
        "Spearman's rho is reported beside Pearson's r; only Pearson is the paper's.",
    ),
)
