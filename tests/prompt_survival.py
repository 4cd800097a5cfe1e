"""How many items of the paper-recipe prompts survive each stage, with a real model behind llama.cpp.

Runs the `generate` template's LLM stages with biaskit's own functions (the ones `biaskit run` calls)
against a llama.cpp server: tuples (``attributes@2``), sentences (``sentences@2``), anti-stereotype
sentences (``sentences_anti@1``), pairs and the minimal-pair checker, CATs (``cat_intrasentence@2``,
``cat_intersentence@2``), and counts per stage what survives

1. **parsing**: rows the task made from the model's replies (a job whose reply is not usable JSON, or
   fails the schema after repair, gives none);
2. **the checker**: the task's own checks (a tuple attribute that repeats the identity, a sentence
   that does not name the group), the pair builder and the minimal-pair checker, the CAT structural
   checks (:func:`biaskit.cat_checks.check_cat`);
3. **a simulated review**: :func:`simulated_review`, rules that stand in for the people of the
   review stages. They are stricter than the checkers but judge no meaning: a tuple attribute must be
   one real word of 3 letters or more (``wordfreq`` Zipf frequency >= 2.5) that is not a group word; a sentence must be
   6-40 words, >= 80 % of them real words, naming the group, no placeholder text and not a list of
   words ("Dalit, poor, ..."); a CAT's parts
   must be >= 80 % real words, its context at most 25 words, its fills real single words, and its options must not
   say the same (the stereotype and the anti-stereotype differ in more than an added "not").

``python tests/prompt_survival.py --gguf PATH [--chat-format gemma] [--alias NAME]`` prints the table
and writes it as JSON (``--out``); docs/curation.md ("Paper-recipe prompts on small models") has the
figures. ``tests/test_prompt_survival.py`` runs a smaller version and asserts that the v2 prompts
yield usable tuples, sentences and CATs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO / "tests") not in sys.path:
    sys.path.insert(0, str(REPO / "tests"))

IDENTITIES = {"caste": ["Dalit", "Brahmin"], "religion": ["Muslim", "Hindu"]}
# the accepted tuples the sentence stages start from (the same for every model, so that the sentence
# figures do not depend on the tuple stage): written by the biaskit team, IndiBias-style
TUPLES = [
    ("Dalit", "caste", "poor", "negative"),
    ("Brahmin", "caste", "arrogant", "negative"),
    ("Brahmin", "caste", "learned", "positive"),
    ("Muslim", "religion", "violent", "negative"),
    ("Hindu", "religion", "religious", "positive"),
    ("Muslim", "religion", "generous", "positive"),
]
#: the prompts measured: the paper-recipe wording as it was (``before``) and as shipped now (``after``)
PROMPT_SETS = {
    "before": {
        "tuples": "attributes@2",
        "stereo": "sentences@2",
        "anti": "sentences_anti@1",
        "intrasentence": "cat_intrasentence@1",
        "intersentence": "cat_intersentence@1",
    },
    "after": {
        "tuples": "attributes@3",
        "stereo": "sentences@3",
        "anti": "sentences_anti@2",
        "intrasentence": "cat_intrasentence@2",
        "intersentence": "cat_intersentence@2",
    },
}
CAT_TARGETS = {"religion": ["Muslim", "Hindu"], "caste": ["Dalit", "Brahmin"]}
MIN_ZIPF = 2.5


def _known(word: str, lang: str = "en") -> bool:
    from wordfreq import zipf_frequency

    return zipf_frequency(word.lower(), lang) >= MIN_ZIPF


def _known_share(text: str, lang: str = "en") -> float:
    from biaskit.cat_checks import words

    ws = [w for w in words(text) if not w.isdigit()]
    return sum(_known(w, lang) for w in ws) / len(ws) if ws else 0.0


_PLACEHOLDER = re.compile(r"\b(BLANK|sentence \d|\.\.\.|lorem|ipsum|xxx|N/A)\b|\{|\}", re.I)


def simulated_review(kind: str, row: dict[str, Any], inventory=None) -> str | None:
    """None when a simulated reviewer keeps the item, else why not (see the module docstring)."""
    from biaskit.cat_checks import OPTION_KEYS, words
    from biaskit.inventory import load_inventory

    inv = inventory or load_inventory()
    if kind == "tuple":
        a = str(row.get("attribute") or "")
        if len(words(a)) != 1:
            return "not one word"
        if len(a) < 3:
            return "too short to be a word of its own"
        if not _known(a):
            return "not a known word"
        if inv.is_identity_word(a, "en"):
            return "a group word, not an attribute"
        return None
    if kind == "sentence":
        s = str(row.get("sentence") or "")
        n = len(words(s))
        if row.get("status") == "rejected":
            return "does not name the group"
        if not 6 <= n <= 40:
            return f"{n} words"
        if _PLACEHOLDER.search(s):
            return "placeholder text"
        if re.match(r"^\s*[\w-]+\s*,\s*[\w-]+\s*,", s):
            return "a list of words, not a sentence"
        if _known_share(s) < 0.8:
            return "not real words"
        return None
    if kind == "cat":
        parts = [str(row.get("context") or "").replace("BLANK", " ")] + [str(row.get(k) or "") for k in OPTION_KEYS]
        if len(words(parts[0])) > 25:
            return "context longer than 25 words (StereoSet's average 8-15)"
        if any(_known_share(p) < 0.8 for p in parts):
            return "not real words"
        if row.get("split") == "intrasentence" and not all(
            _known(str(row.get(k) or "")) for k in OPTION_KEYS if len(words(str(row.get(k) or ""))) == 1
        ):
            return "a fill is not a known word"
        st, an = (" ".join(words(str(row.get(k) or "").lower())) for k in ("stereotype", "anti_stereotype"))
        if st.replace(" not ", " ") == an.replace(" not ", " ") or re.sub(r"\bnot\b ?", "", an) == st:
            return "the anti-stereotype only negates the stereotype"
        return None
    raise ValueError(kind)


def _rows(path: Path) -> list[dict]:
    from biaskit.io import read_jsonl

    return read_jsonl(path) if path.exists() else []


def measure(
    base_url: str,
    model: str,
    work: Path,
    *,
    n_attributes: int = 5,
    per_tuple: int = 3,
    per_target: int = 2,
    max_tokens: dict[str, int] | None = None,
    stages: tuple[str, ...] = ("tuples", "sentences", "cats"),
    prompts: str = "after",
    tuples: list | None = None,
    cat_targets: dict[str, list[str]] | None = None,
    identities: dict[str, list[str]] | None = None,
    temperature: float | None = None,
) -> dict[str, Any]:
    """Run the stages against ``base_url`` and count what survives (see the module docstring);
    ``temperature``: sent with every request (None: each task's default, 0.7 here; the tests use 0)."""
    from biaskit.curation.cats import drafts_path
    from biaskit.curation.generate import generate_cats, generate_sentences, generate_tuples
    from biaskit.curation.llm import get_llm
    from biaskit.curation.options import CatsOptions, SentencesOptions, TuplesOptions
    from biaskit.curation.pair_options import BuildPairsOptions
    from biaskit.curation.pairs import build_pairs_file
    from biaskit.curation.prompts import get_prompt

    from biaskit.cat_checks import check_cat
    from biaskit.check import check_pairs
    from biaskit.inventory import load_inventory
    from biaskit.readers import read_pairs

    mt = {"tuples": 160, "sentences": 400, "cats": 700, **(max_tokens or {})}
    inv = load_inventory()
    work.mkdir(parents=True, exist_ok=True)
    refs = PROMPT_SETS[prompts]
    tuples = TUPLES if tuples is None else tuples
    cat_targets = CAT_TARGETS if cat_targets is None else cat_targets
    identities = IDENTITIES if identities is None else identities
    out: dict[str, Any] = {"model": model, "prompts": refs, "stages": {}}

    def client():
        return get_llm("openai", model=model, base_url=base_url, api_key="none", timeout=300, max_retries=1)

    tuples_ok = work / "tuples.reviewed.jsonl"
    if "tuples" in stages:
        t_out = work / "tuples.jsonl"
        jobs = 0
        for axis, ids in identities.items():
            s = generate_tuples(
                client(),
                get_prompt(refs["tuples"]),
                TuplesOptions.from_kwargs(axis=axis, out=t_out, identities=ids, polarity="both", n=n_attributes),
                params={"max_tokens": mt["tuples"], "temperature": temperature},
                progress=False,
                inventory=inv,
            )
            jobs += s.jobs
        rows = _rows(t_out)
        kept = [r for r in rows if simulated_review("tuple", r, inv) is None]
        out["stages"]["tuples"] = {
            "jobs": jobs,
            "asked": jobs * n_attributes,
            "parsed": len(rows),
            "checked": len(rows),
            "reviewed": len(kept),
            "examples": [f"{r['identity']}: {r['attribute']}" for r in kept[:6]],
            "jobs_with_usable": len({(r["identity"], r["polarity"]) for r in kept}),
            "kept": [f"{r['identity']} ({r['polarity']}): {r['attribute']}" for r in kept],
        }
    if "sentences" in stages:
        from biaskit.io import write_jsonl
        from biaskit.schema import BiasTuple

        write_jsonl(
            tuples_ok,
            [BiasTuple(identity=i, axis=a, attribute=t, polarity=p, status="accepted") for i, a, t, p in tuples],
        )
        n_t = len(tuples)
        for mode in ("stereo", "anti"):
            s_out = work / f"sentences.{mode}.jsonl"
            generate_sentences(
                client(),
                get_prompt(refs[mode]),
                SentencesOptions.from_kwargs(tuples=tuples_ok, out=s_out, per_tuple=per_tuple, mode=mode),
                params={"max_tokens": mt["sentences"], "temperature": temperature},
                progress=False,
                inventory=inv,
            )
            rows = _rows(s_out)
            named = [r for r in rows if r.get("status") != "rejected"]
            kept = [r for r in named if simulated_review("sentence", r, inv) is None]
            write_jsonl(work / f"sentences.{mode}.reviewed.jsonl", kept)
            pairs_file = work / f"pairs.{mode}.jsonl"
            res = (
                build_pairs_file(
                    BuildPairsOptions(sentences=work / f"sentences.{mode}.reviewed.jsonl", out=pairs_file),
                    inventory=inv,
                    progress=False,
                )
                if kept
                else None
            )
            pairs = read_pairs(pairs_file).pairs if res is not None and res.pairs else []
            checked = check_pairs(pairs, inventory=inv) if pairs else []
            clean = [c for c in checked if not c.flags]
            out["stages"][f"sentences ({mode})"] = {
                "jobs": n_t,
                "asked": n_t * per_tuple,
                "parsed": len(rows),
                "checked": len(named),
                "reviewed": len(kept),
                "pairs": len(pairs),
                "pairs_unflagged": len(clean),
                "examples": [r["sentence"] for r in kept[:3]],
            }
    if "cats" in stages:
        c_out = work / "cats.jsonl"
        for dom, targets in cat_targets.items():
            generate_cats(
                client,
                CatsOptions.from_kwargs(out=c_out, domains=dom, targets=targets, per_target=per_target),
                prompts={
                    "intrasentence": get_prompt(refs["intrasentence"]),
                    "intersentence": get_prompt(refs["intersentence"]),
                },
                params={"max_tokens": mt["cats"], "temperature": temperature},
                progress=False,
                inventory=inv,
            )
        for split in ("intrasentence", "intersentence"):
            drafts = _rows(drafts_path(c_out, split))
            valid = [d for d in drafts if not check_cat(d, inv)]
            kept = [d for d in valid if simulated_review("cat", d, inv) is None]
            n_jobs = sum(len(t) for t in cat_targets.values())
            out["stages"][f"CATs ({split})"] = {
                "jobs": n_jobs,
                "asked": n_jobs * per_target,
                "parsed": len(drafts),
                "checked": len(valid),
                "reviewed": len(kept),
                "examples": [
                    {k: d[k] for k in ("target", "context", "stereotype", "anti_stereotype", "unrelated")}
                    for d in kept[:2]
                ],
            }
    return out


def render(results: list[dict[str, Any]]) -> str:
    lines = [
        "| model | prompts | stage | jobs | items asked | parsed | pass the checker | pass the simulated review |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        for st, c in r["stages"].items():
            key = {
                "tuples": "tuples",
                "sentences (stereo)": "stereo",
                "sentences (anti)": "anti",
                "CATs (intrasentence)": "intrasentence",
                "CATs (intersentence)": "intersentence",
            }[st]
            extra = f" (pairs {c['pairs']}, unflagged {c['pairs_unflagged']})" if "pairs" in c else ""
            lines.append(
                f"| {r['model']} | {r['prompts'][key]} | {st} | {c['jobs']} | {c['asked']} | {c['parsed']} | "
                f"{c['checked']} | {c['reviewed']}{extra} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from fixtures_llm import serve_llama

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gguf", required=True)
    ap.add_argument("--alias", default=None)
    ap.add_argument("--chat-format", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--stages", default="tuples,sentences,cats")
    ap.add_argument("--per-target", type=int, default=2)
    ap.add_argument("--prompts", choices=sorted(PROMPT_SETS), default="after")
    a = ap.parse_args(argv)
    alias = a.alias or Path(a.gguf).stem.lower()
    extra = ("--chat_format", a.chat_format) if a.chat_format else ()
    with tempfile.TemporaryDirectory() as tmp, serve_llama(Path(tmp), extra, gguf=Path(a.gguf), alias=alias) as srv:
        import os

        os.environ.setdefault("BIASKIT_CACHE_DIR", str(Path(tmp) / "cache"))
        res = measure(
            srv.base_url,
            srv.model,
            Path(tmp) / "work",
            stages=tuple(a.stages.split(",")),
            per_target=a.per_target,
            prompts=a.prompts,
        )
    print(render([res]))
    print(json.dumps(res, ensure_ascii=False, indent=1))
    if a.out:
        Path(a.out).write_text(json.dumps(res, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
