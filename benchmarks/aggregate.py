"""Benchmark: `biaskit annotate aggregate` and `annotate agreement` through the whole CLI on N items x 5
judgments (default 1,000,000 items: 5.5 million rows, a pulled-judgments CSV of ~500 MB).

The judgments are generated here (:func:`make_judgments`: 40 annotators of different skill, a
second question on one item in ten, a text correction on one in fifty, one answer in two hundred
left empty, a bias type and target term per task, the writer's reference label) into a temporary
CSV. Each command runs in a process of its own: wall time, CPU time and peak RSS (``wait4``, the
kernel's figure for that process alone). Against the straightforward implementation kept here
(:func:`naive_aggregate`, :func:`naive_agreement`: dicts and Counters per item, the reliability-data
matrix for Krippendorff's alpha, scikit-learn per annotator pair for Cohen's kappa), run in a process
of its own on the same file, the numbers must be equal. ``--baseline BIASKIT`` also runs another
biaskit executable (e.g. the release before this one) on the same file: ratios, and its output
files must be byte-identical (agreement.json but for the command line it records).

Goals (issue 31): each command under 10 s and 1 GB at 1,000,000 items on a quiet 2-core machine.
On a shared machine the CPU seconds are the figure to judge; RSS does not depend on the load.
Run: ``python benchmarks/aggregate.py [--items 1000000] [--baseline PATH] [--keep DIR] [--repeat N] [--no-loop]``
(``--keep``: the judgments and outputs stay in DIR, and a later run with the same sizes reuses the judgments;
``--repeat``: the run with the least CPU time of N counts; ``--no-loop``: without the straightforward loop,
which takes minutes at a million items).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

LABELS = np.array(["stereo", "antistereo", "invalid"])
BIAS_TYPES = np.array(["gender", "religion", "caste", "age", "disability", "socioeconomic", "physical-appearance"])
BLOCK = 10_000  # items per seeded block: the first k items are the same whatever N (a slice of a larger file)


def make_judgments(
    n_items: int, per_item: int = 5, n_workers: int = 40, n_terms: int = 400, seed: int = 0, dup_rate: float = 0.0
) -> pd.DataFrame:
    """Judgments of ``n_items`` pairs (rows of a task together, as ``annotate pull`` writes them).
    ``dup_rate``: a share of answers given a second time, later (``--duplicates last`` keeps those)."""
    parts = [
        _block(b, min(BLOCK, n_items - b * BLOCK), per_item, n_workers, n_terms, seed, dup_rate)
        for b in range((n_items + BLOCK - 1) // BLOCK)
    ]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _stamps(seconds: np.ndarray):
    return pd.to_datetime(seconds, unit="s", utc=True).strftime("%Y-%m-%dT%H:%M:%S.000000Z")


def _block(b: int, n: int, per: int, n_workers: int, n_terms: int, seed: int, dup_rate: float) -> pd.DataFrame:
    rng = np.random.default_rng([seed, b])
    skill = np.random.default_rng([seed, 1 << 30]).uniform(0.55, 0.95, n_workers)
    truth = rng.integers(0, 3, n)
    workers = np.argsort(rng.random((n, n_workers)), axis=1)[:, :per]
    correct = rng.random((n, per)) < skill[workers]
    noise = (truth[:, None] + rng.integers(1, 3, (n, per))) % 3
    lab = LABELS[np.where(correct, truth[:, None], noise)].astype(object)
    lab[rng.random((n, per)) < 0.005] = ""  # an annotator who skipped the question
    term = rng.integers(0, n_terms, n)
    ids = np.char.add("p-", np.char.zfill((b * BLOCK + np.arange(n)).astype(str), 7))
    df = pd.DataFrame(
        {
            "task": np.repeat(ids, per),
            "worker": np.char.add("w", np.char.zfill(workers.ravel().astype(str), 3)),
            "label": lab.ravel(),
            "question": "validity",
            "qtype": "choice",
            "updated_at": _stamps(1_700_000_000 + rng.integers(0, 86_400 * 30, n * per)),
            "bias_type": np.repeat(BIAS_TYPES[term % len(BIAS_TYPES)], per),
            "target": np.repeat(np.char.add("group", term.astype(str)), per),
            "reference": np.repeat(LABELS[truth], per),
        }
    )
    extra = []
    concern = np.flatnonzero(rng.random(n) < 0.1)  # a second question on one item in ten
    if len(concern):
        c = df.iloc[(concern[:, None] * per + np.arange(per)).ravel()].copy()
        c["question"], c["reference"] = "concern", ""
        c["label"] = np.where(rng.random(len(c)) < 0.7, "yes", "no")
        extra.append(c)
    text = np.flatnonzero(rng.random(n) < 0.02)  # a corrected sentence (a text answer, never voted on)
    if len(text):
        t = df.iloc[text * per].copy()
        t["question"], t["qtype"], t["label"], t["reference"] = "correction", "text", "a corrected sentence", ""
        extra.append(t)
    if dup_rate:
        d = df.iloc[np.flatnonzero(rng.random(len(df)) < dup_rate)].copy()
        d["label"] = LABELS[rng.integers(0, 3, len(d))]
        d["updated_at"] = _stamps(1_800_000_000 + rng.integers(0, 1000, len(d)))
        extra.append(d)
    df = pd.concat([df, *extra], ignore_index=True)
    order = np.lexsort((rng.random(len(df)), df["task"].to_numpy()))
    return df.iloc[order].reset_index(drop=True)


def write_judgments(df: pd.DataFrame, path: Path) -> Path:
    if path.suffix == ".csv":
        df.to_csv(path, index=False)
    else:
        df.to_json(path, orient="records", lines=True, force_ascii=False)
    return path


# ------------------------------------------------------------------------------ the straightforward code
def _items(path: Path):
    """(task, question) -> [(worker, label)] of the voted answers, read row by row (csv module)."""
    import csv

    items: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    with open(path, encoding="utf-8", newline="") as fh:
        for r in csv.DictReader(fh):
            if r.get("qtype") == "text" or not (r["label"] or "").strip():
                continue
            items[(r["task"], r.get("question") or "label")].append((r["worker"], r["label"].strip()))
    return items


def naive_aggregate(items) -> dict:
    """Plurality per item (Counter), ties flagged, strict majority: (label, votes, n, status)."""
    out = {}
    for key, answers in items.items():
        c = Counter(lab for _, lab in answers).most_common()
        tie = len(c) > 1 and c[0][1] == c[1][1]
        votes, n = c[0][1], len(answers)
        status = "needs_adjudication" if tie else ("accepted" if votes * 2 > n else "rejected")
        out[key] = (None if tie else c[0][0], votes, n, status)
    return out


def naive_agreement(items) -> dict:
    """Pooled Fleiss' kappa, percent agreement, Krippendorff's alpha (the package on the reliability-data
    matrix) and mean pairwise Cohen's kappa (scikit-learn), labels of each question distinct."""
    import krippendorff
    from sklearn.metrics import cohen_kappa_score

    p_i, totals = [], Counter()
    for (_, q), answers in items.items():
        n = len(answers)
        c = Counter(f"{q}={lab}" for _, lab in answers)
        if n >= 2:
            totals.update(c)
            p_i.append((sum(v * v for v in c.values()) - n) / (n * (n - 1)))
    p_bar = sum(p_i) / len(p_i)
    tot = sum(totals.values())
    p_e = sum((v / tot) ** 2 for v in totals.values())
    workers = sorted({w for answers in items.values() for w, _ in answers})
    w_idx = {w: i for i, w in enumerate(workers)}
    cats = sorted({f"{q}={lab}" for (_, q), answers in items.items() for _, lab in answers})
    code = {c: i for i, c in enumerate(cats)}
    mat = np.full((len(workers), len(items)), np.nan)
    per_w: dict[str, dict] = defaultdict(dict)
    for j, ((t, q), answers) in enumerate(items.items()):
        for w, lab in answers:
            mat[w_idx[w], j] = code[f"{q}={lab}"]
            per_w[w][(t, q)] = f"{q}={lab}"
    alpha = krippendorff.alpha(reliability_data=mat, level_of_measurement="nominal")
    kappas = []
    for a, b in itertools.combinations(workers, 2):
        shared = per_w[a].keys() & per_w[b].keys()
        if len(shared) < 2:
            continue
        x, y = [per_w[a][k] for k in shared], [per_w[b][k] for k in shared]
        if len(set(x) | set(y)) > 1:
            kappas.append(cohen_kappa_score(x, y))
    return {
        "fleiss_kappa": (p_bar - p_e) / (1 - p_e),
        "percent_agreement": p_bar,
        "krippendorff_alpha": float(alpha),
        "mean_pairwise_cohen_kappa": float(np.mean(kappas)),
    }


def _loop_main(path: Path, out: Path) -> None:
    """``--loop FILE OUT``: the straightforward code on FILE, its results as JSON in OUT."""
    t0 = time.perf_counter()
    items = _items(path)
    agg = naive_aggregate(items)
    t_agg = time.perf_counter() - t0
    agr = naive_agreement(items)
    t_agr = time.perf_counter() - t0
    json.dump(
        {
            "aggregate": {f"{t}\x1f{q}": list(v) for (t, q), v in agg.items()},
            "agreement": agr,
            "seconds": {"aggregate": t_agg, "agreement": t_agr},
        },
        open(out, "w"),
    )


# ------------------------------------------------------------------------------ measuring
def run(argv: list[str], env: dict) -> tuple[float, float, int]:
    """(wall s, CPU s, peak RSS bytes) of one command in a process of its own."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().decode("utf-8", "replace") if p.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {err[-800:]}")
    return time.perf_counter() - t0, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024


def _digest(folder: Path) -> dict[str, str]:
    out = {}
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = f.read_bytes()
        if f.name == "agreement.json":
            rep = json.loads(data)
            rep.pop("command", None)
            data = json.dumps(rep, sort_keys=True).encode()
        out[f.relative_to(folder).as_posix()] = hashlib.sha256(data).hexdigest()
    return out


def _check_against_loop(work: Path, loop: dict) -> None:
    table = pd.read_csv(work / "biaskit" / "aggregate.csv", keep_default_na=False, na_values=[""])
    ours = {
        f"{t}\x1f{q}": [lab if isinstance(lab, str) else None, int(v), int(n), s]
        for t, q, lab, v, n, s in table[["task", "question", "label", "votes", "n_annotators", "status"]].itertuples(
            index=False
        )
    }
    assert ours == loop["aggregate"], "aggregate differs from the straightforward loop"
    rep = json.loads((work / "biaskit" / "agreement" / "agreement.json").read_text())
    for k, v in loop["agreement"].items():
        assert abs(rep[k] - v) < 1e-5, (k, rep[k], v)


def _args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=1_000_000)
    ap.add_argument("--per-item", type=int, default=5)
    ap.add_argument("--workers", type=int, default=40)
    ap.add_argument("--baseline", help="another biaskit executable to compare with (e.g. the previous release)")
    ap.add_argument("--no-loop", action="store_true", help="skip the straightforward loop (minutes at 1M items)")
    ap.add_argument("--keep", help="keep the judgments and outputs in this folder (a later run reuses the judgments)")
    ap.add_argument("--repeat", type=int, default=1, help="run each command this many times; the fastest counts")
    return ap.parse_args()


def _judgments(a: argparse.Namespace, work: Path) -> Path:
    """The judgments file: written by a process of its own (a child's peak RSS counts the parent's pages
    at fork: Linux folds them into the child's high-water mark, so this process stays small), or the one a
    kept folder holds for the same sizes."""
    src, stamp = work / "judgments.csv", work / "judgments.sizes"
    sizes = f"{a.items} {a.per_item} {a.workers}"
    t0 = time.perf_counter()
    if not (src.exists() and stamp.exists() and stamp.read_text() == sizes):
        subprocess.run([sys.executable, __file__, "--write", *sizes.split(), str(src)], check=True)
        stamp.write_text(sizes)
    rows = sum(1 for _ in open(src, "rb")) - 1
    print(
        f"{a.items:,} items x {a.per_item} annotators (pool of {a.workers}): {rows:,} judgment rows, "
        f"{src.stat().st_size / 1e6:.0f} MB CSV (ready in {time.perf_counter() - t0:.0f} s); load "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    return src


def _measure(exe_argv: list[str], src: Path, out: Path, env: dict, repeat: int) -> dict[str, tuple]:
    """(wall s, CPU s, peak RSS bytes) of each command: the run with the least CPU time of ``repeat``."""
    out.mkdir(exist_ok=True)
    argv = {
        "aggregate": ["annotate", "aggregate", "--judgments", str(src), "--out", str(out / "aggregate.csv")],
        "agreement": ["annotate", "agreement", "--judgments", str(src), "--out", str(out / "agreement")],
    }
    return {
        cmd: min((run(exe_argv + args, env) for _ in range(repeat)), key=lambda r: r[1]) for cmd, args in argv.items()
    }


def _report(results: dict, loop: dict | None) -> None:
    base = results.get("baseline")
    print(
        f"\n{'command':<22}{'wall s':>8}{'CPU s':>8}{'RSS MB':>8}"
        + (f"{'vs baseline (wall/CPU/RSS)':>30}" if base else "")
        + (f"{'vs loop (CPU)':>15}" if loop else "")
        + "  goal (< 10 s, < 1 GB)"
    )
    for cmd in ("aggregate", "agreement"):
        wall, cpu, rss = results["biaskit"][cmd]
        line = f"annotate {cmd:<13}{wall:>8.1f}{cpu:>8.1f}{rss / 1e6:>8.0f}"
        if base:
            bw, bc, br = base[cmd]
            line += f"{bw / wall:>14.1f}x /{bc / cpu:>5.1f}x /{br / rss:>5.1f}x"
        if loop:
            line += f"{loop['seconds'][cmd] / cpu:>14.1f}x"
        verdict = "met" if wall < 10 and rss < 1e9 else ("met on CPU time" if cpu < 10 and rss < 1e9 else "MISSED")
        print(line + f"  {verdict}")
    for cmd in ("aggregate", "agreement") if base else ():
        bw, bc, br = base[cmd]
        print(f"baseline {cmd:<13}{bw:>8.1f}{bc:>8.1f}{br / 1e6:>8.0f}")
    if loop:
        print(
            f"{'straightforward loop':<22} aggregate {loop['seconds']['aggregate']:.1f} s, "
            f"both {loop['seconds']['agreement']:.1f} s (CPU, in one process)"
        )


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--loop":
        return _loop_main(Path(sys.argv[2]), Path(sys.argv[3]))
    if len(sys.argv) == 6 and sys.argv[1] == "--write":
        n, per, workers = (int(x) for x in sys.argv[2:5])
        write_judgments(make_judgments(n, per, workers), Path(sys.argv[5]))
        return None
    a = _args()
    exe = Path(sys.executable).with_name("biaskit")
    biaskit = [str(exe)] if exe.exists() else [sys.executable, "-m", "biaskit.cli"]
    work = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="biaskit-bench-agg-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "BIASKIT_NO_PROGRESS": "1", "OMP_NUM_THREADS": "1"}
    try:
        src = _judgments(a, work)
        results = {"biaskit": _measure(biaskit, src, work / "biaskit", env, a.repeat)}
        if a.baseline:
            results["baseline"] = _measure([a.baseline], src, work / "baseline", env, a.repeat)
            same = _digest(work / "biaskit") == _digest(work / "baseline")
            print(f"outputs of biaskit and the baseline: {'byte-identical' if same else 'DIFFERENT'}")
        loop = None
        if not a.no_loop:
            run([sys.executable, __file__, "--loop", str(src), str(work / "loop.json")], env)
            loop = json.loads((work / "loop.json").read_text())
            _check_against_loop(work, loop)
            print("results equal to the straightforward loop's (majority vote per item; Fleiss, percent, alpha, Cohen)")
        _report(results, loop)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
