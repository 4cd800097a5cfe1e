"""Pick the names of each group by their frequency in a text corpus (the IndiBias recipe).

IndiBias (Sahoo et al. 2024, Section 5.1 and Appendix G) took candidate first names of each
gender-religion group from public lists, counted how often each occurs in the pre-training corpora
of MuRIL and IndicBERT, and kept the 14 most frequent names per group (Table 10, most frequent
first). :func:`top_names` does the same for any corpus a user supplies.

Counting: the corpus is read line by line (plain text, ``.gz`` allowed; a folder means every
``*.txt`` / ``*.txt.gz`` in it), NFC-normalised and case-folded, and split into words: maximal runs
of letters, digits, combining marks and the joiners ZWJ/ZWNJ (so vowel signs, viramas, nuktas and
joiners stay inside a word in any script; spaces, punctuation, the danda, hyphens and apostrophes
end it). A candidate (NFC, case-folded) is counted each time its words occur as consecutive words:
"Rahul's" and "rahul-kumar" count for "rahul", "Ramesh" and "रामायण" do not count for "ram" / "राम".
Case-insensitive matching concerns Latin letters (Devanagari has no case); NFC makes precomposed and
decomposed nukta letters equal.

Output, in the list format of ``data/seat/indibias-paper/lexicon.json`` (``lists`` -> group ->
``{"source", "kind": "name", "words": [{<language code>: name, "count": n}, ...]}``, the code told by the
name's script), ranked by count
(ties keep the candidates' order), names that never occur left out.
"""

from __future__ import annotations

import gzip
import unicodedata
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from biaskit.errors import InputError
from biaskit.options import say

if TYPE_CHECKING:
    from .options import SeatNamesOptions

_WORD = None


def _word_re():
    global _WORD
    if _WORD is None:
        import regex

        _WORD = regex.compile(r"[\p{L}\p{M}\p{N}\p{Join_Control}]+")
    return _WORD


def words(text: str) -> list[str]:
    """NFC, case-folded words of ``text`` (see the module docstring)."""
    return _word_re().findall(unicodedata.normalize("NFC", text).casefold())


def normalize_name(name: str) -> tuple[str, ...]:
    return tuple(words(name))


def corpus_files(paths: Sequence[str | Path]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(
                f for f in p.rglob("*") if f.is_file() and (f.name.endswith(".txt") or f.name.endswith(".txt.gz"))
            )
            if not found:
                raise InputError("no *.txt or *.txt.gz files in this folder.", path=p, fix="point at text files.")
            out += found
        elif p.is_file():
            out.append(p)
        else:
            raise InputError("corpus file not found.", path=p, fix=f"check the {say('corpus')} path.")
    return out


def _lines(path: Path) -> Iterator[str]:
    opener = gzip.open if path.name.endswith(".gz") else open
    from biaskit.textcheck import CONTROL_CHARS, CONTROL_FIX, control_char_name

    i = 0
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            for i, line in enumerate(fh, start=1):
                bad = CONTROL_CHARS.search(line)
                if bad:  # a binary file, or UTF-16 read as UTF-8 (a NUL after every letter)
                    raise InputError(
                        f"holds a control character ({control_char_name(bad.group())}).",
                        path=path,
                        row=i,
                        fix=CONTROL_FIX + " A UTF-16 file: convert it to UTF-8.",
                    )
                yield line
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not valid UTF-8 ({exc.reason} at byte {exc.start}).", path=path, fix="convert the corpus to UTF-8."
        ) from exc
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:  # a .gz that is not gzip, cut short or damaged
        what = "not a gzip file" if isinstance(exc, gzip.BadGzipFile) else "a damaged or cut-short gzip file"
        raise InputError(
            f"{what} ({' '.join(str(exc).split())[:100] or type(exc).__name__}) after {i} line(s).",
            path=path,
            fix="download or compress it again (gzip -t FILE checks it); a plain text file must not end in .gz.",
        ) from None


def corpus_lines(corpus: Sequence[str | Path]) -> Iterator[str]:
    """Every line of the corpus files (files, folders of *.txt / *.txt.gz), streamed, checked as UTF-8 text."""
    for f in corpus_files(corpus):
        yield from _lines(f)


def count_names(corpus: Iterable[str | Path], names: Iterable[str], *, lines: Iterable[str] | None = None) -> Counter:
    """Occurrences of every candidate (keyed by the candidate string as given) in the corpus files,
    or in ``lines`` when given."""
    keys: dict[tuple[str, ...], list[str]] = {}
    for n in names:
        t = normalize_name(n)
        if not t:
            raise InputError(f"candidate name {n!r} has no letters.", fix="remove it from the candidates.")
        keys.setdefault(t, []).append(n)
    single = {k[0] for k in keys if len(k) == 1}
    multi = [k for k in keys if len(k) > 1]
    counts: Counter = Counter()
    source = lines if lines is not None else (ln for f in corpus_files(list(corpus)) for ln in _lines(f))
    for line in source:
        toks = words(line)
        if single:
            counts.update(t for t in toks if t in single)
        for k in multi:
            width = len(k)
            counts[k] += sum(1 for i in range(len(toks) - width + 1) if tuple(toks[i : i + width]) == k)
    out: Counter = Counter()
    for k, originals in keys.items():
        c = counts[k[0]] if len(k) == 1 else counts[k]
        for o in originals:
            out[o] = c
    return out


def read_candidates(path: str | Path, lang: str | None = None) -> dict[str, list[str]]:
    """Candidates per group: a table with ``group, name`` columns (CSV/TSV/JSONL), a JSON object
        ``{group: [names]}``, or a lexicon with ``lists`` (``--lang`` picks the words of a language: ``en``,
    ``hi``, ...; a lexicon biaskit ships has its other languages' words in ``data/languages``)."""
    path = Path(path)
    if path.suffix.lower() == ".json":
        from biaskit.io import read_json

        obj = read_json(path, fix='write {"GroupName": ["name", ...]} or a lexicon with "lists".')
        if isinstance(obj, dict) and isinstance(obj.get("lists"), dict):
            lg = lang or "en"
            shipped = _shipped_set(path)
            if shipped is not None:  # biaskit's own lexicon: its other languages' words are in data/languages
                from .seat_sets import with_renderings

                obj = with_renderings(obj, shipped)
            out: dict[str, list[str]] = {}
            for g, lst in obj["lists"].items():
                ws = [w.get(lg) for w in (lst.get("words") or []) if isinstance(w, dict)]
                if lst.get("kind") == "name" and all(isinstance(w, str) for w in ws) and ws:
                    out[g] = cast(list[str], ws)  # all str: checked just above
            if not out:
                raise InputError(
                    f"no name lists with '{lg}' words in this lexicon.",
                    path=path,
                    fix=f'use a lexicon whose lists have kind "name", or pass {say("lang")}.',
                )
            return out
        if not isinstance(obj, dict) or not all(
            isinstance(v, list) and all(isinstance(x, str) for x in v) for v in obj.values()
        ):
            raise InputError(
                'expected {"GroupName": ["name", ...], ...}.', path=path, fix="one list of candidate names per group."
            )
        return {str(g): list(v) for g, v in obj.items()}
    from biaskit.io import read_table

    df = read_table(path)
    missing = [c for c in ("group", "name") if c not in df.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}.", path=path, fix="one row per candidate: group,name."
        )
    out = {}
    for i, (g, n) in enumerate(zip(df["group"], df["name"], strict=False), start=1):
        if not isinstance(g, str) or not isinstance(n, str) or not g.strip() or not n.strip():
            raise InputError("empty group or name.", path=path, row=i, fix="fill in both columns.")
        out.setdefault(g.strip(), []).append(n.strip())
    return out


def _shipped_set(path: Path) -> str | None:
    """The SEAT set whose shipped lexicon ``path`` is (``data/seat/<set>/lexicon.json``), else None."""
    from .seat_sets import DATA_DIR

    p = path.resolve()
    return p.parent.name if p.name == "lexicon.json" and p.parent.parent == Path(DATA_DIR).resolve() else None


def _script_key(name: str) -> str:
    """The language a name is written for, told by its script (Devanagari: Hindi, Latin: English)."""
    from biaskit.languages import by_script

    return by_script(name)


def top_names(
    corpus: Sequence[str | Path],
    candidates: dict[str, list[str]],
    k: int = 14,
    *,
    lines: Iterable[str] | None = None,
    source: str | None = None,
) -> dict:
    """The ``k`` most frequent candidates per group, with every count (see the module docstring)."""
    if k < 1:
        raise InputError(f"{say('top_k')} must be at least 1.", fix="pass a positive number.")
    all_names = [n for ns in candidates.values() for n in ns]
    counts = count_names(corpus, all_names, lines=lines)
    shared = sorted({n for n in all_names if sum(n in ns for ns in candidates.values()) > 1})
    lists, notes = {}, []
    for g, ns in candidates.items():
        ranked = sorted(dict.fromkeys(ns), key=lambda n: -counts[n])  # stable: ties keep the candidates' order
        kept = [n for n in ranked if counts[n] > 0][:k]
        if len(kept) < k:
            notes.append(f"{g}: only {len(kept)} of the {len(set(ns))} candidates occur in the corpus (wanted {k}).")
        lists[g] = {
            "source": source or f"the {k} most frequent candidates in the corpus (biaskit evaluate seat-names)",
            "kind": "name",
            "words": [{_script_key(n): n, "count": int(counts[n])} for n in kept],
        }
    if shared:
        notes.append(f"candidates in more than one group (counted once, listed in each): {', '.join(shared)}")
    return {
        "lists": lists,
        "counts": {g: {n: int(counts[n]) for n in dict.fromkeys(ns)} for g, ns in candidates.items()},
        "notes": notes,
    }


def write_names(
    result: dict,
    out: str | Path,
    corpus: Sequence[str | Path],
    k: int,
    counts_csv: str | Path | None = None,
    command: str | None = None,
) -> None:
    """``out``: the lists (JSON, shipped list format) with the corpus files and their SHA-256;
    ``counts_csv``: every candidate's count (group, name, count, rank, kept)."""
    from biaskit.io import sha256_file, write_json, write_table

    files = corpus_files(list(corpus)) if corpus else []
    doc = {
        "about": f"top {k} names per group by frequency in the corpus below (IndiBias recipe, Sahoo et al. 2024, "
        "Appendix G); counts are whole-word, case-insensitive, NFC.",
        "corpus": [{"path": str(f), "sha256": sha256_file(f)} for f in files],
        "command": command,
        "notes": result["notes"],
        "lists": result["lists"],
    }
    write_json(out, doc)
    if counts_csv:
        import pandas as pd

        rows = []
        for g, cs in result["counts"].items():
            kept = {next(iter(w.values())) for w in result["lists"][g]["words"]}
            ranked = sorted(cs, key=lambda n: -cs[n])
            rows += [
                {"group": g, "name": n, "count": cs[n], "rank": ranked.index(n) + 1, "kept": n in kept} for n in cs
            ]
        write_table(counts_csv, pd.DataFrame(rows, columns=["group", "name", "count", "rank", "kept"]))


def seat_names(opts: SeatNamesOptions, *, command: str | None = None) -> dict:
    """``biaskit evaluate seat-names``: the ``top_k`` most frequent candidates of each group in the
    corpus (:func:`top_names`), written to ``opts.out`` (and every count to ``opts.counts``)."""
    cands = read_candidates(opts.candidates, lang=opts.lang)
    res = top_names(opts.corpus, cands, k=opts.top_k)
    write_names(res, opts.out, opts.corpus, opts.top_k, counts_csv=opts.counts, command=command)
    return res
