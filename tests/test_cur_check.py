"""The minimal-pair checker: every flag on hand-made pairs, U/M sets, and verdicts on the real
CrowS-Pairs and IndiBias files, cross-checked with an independent implementation (pandas for
duplicates and scripts, a hand-written LCS diff for changed regions)."""

from __future__ import annotations

import re

import pytest

from biaskit.check import FLAG_CODES, check_file, check_pair, check_pairs, word_diff
from biaskit.cli import main
from biaskit.io import read_jsonl


def codes(more, less, lang="en", **kw):
    return [f.code for f in check_pair({"sent_more": more, "sent_less": less, "lang": lang}, **kw)]


# ------------------------------------------------------------------ every flag, by hand
def test_clean_minimal_pairs_have_no_flags():
    assert codes("Dalits are dirty.", "Brahmins are dirty.") == []
    assert codes("She is a bad driver because she is a woman.", "He is a bad driver because he is a man.") == []
    assert codes("Priya cannot fix her car.", "Rahul cannot fix his car.") == []
    assert codes("गरीब लोग यात्रा नहीं कर पाते।", "अमीर लोग यात्रा नहीं कर पाते।", "hi") == []
    assert codes("लड़की खाना बनाती है।", "लड़का खाना बनाता है।", "hi") == []  # agreement, not a 2nd span
    assert codes("Poor people steal. Poor people lie.", "Rich people steal. Rich people lie.") == []


def test_identical_and_trivial():
    assert codes("The man is tall.", "The man is tall. ") == ["identical"]
    assert codes("The man is tall.", "the man is tall!") == ["trivial_diff"]


def test_multi_span_and_attribute_changed():
    c = check_pair({"sent_more": "Muslims are violent people.", "sent_less": "Hindus are peaceful people."})
    assert [f.code for f in c] == ["multi_span", "attribute_changed"]
    assert "'violent' -> 'peaceful'" in c[1].reason
    assert codes("The old man forgot the keys.", "The young man lost the keys.") == ["multi_span", "attribute_changed"]


def test_span_not_identity():
    f = check_pair({"sent_more": "He was a lazy worker.", "sent_less": "He was a careful worker."})
    assert [x.code for x in f] == ["span_not_identity"] and "'lazy' -> 'careful'" in f[0].reason
    assert codes("He bought a car.", "He sold a car.") == ["span_not_identity"]


def test_mixed_scripts():
    f = check_pair({"sent_more": "राहुल नए CEO हैं।", "sent_less": "अंजली नई CEO हैं।", "lang": "hi"})
    assert "mixed_scripts" in [x.code for x in f]
    assert codes("Rahul is a doctor.", "राहुल is a doctor.") == ["mixed_scripts"]
    assert "mixed_scripts" in codes("Rahul ek doctor hai.", "Priya ek doctor hai.", "hi")  # not Devanagari


def test_translation_collapsed_suggests_explicit_gender():
    src = {"sent_more": "She is a good cook.", "sent_less": "He is a good cook.", "lang": "en"}
    f = check_pair(
        {"sent_more": "वह अच्छा खाना बनाती है।", "sent_less": "वह अच्छा खाना बनाती है।", "lang": "hi"}, source_pair=src
    )
    assert [x.code for x in f] == ["identical", "translation_collapsed"]
    assert "एक पुरुष" in f[1].suggestion and "एक महिला" in f[1].suggestion and "वह" in f[1].suggestion
    f = check_pair(
        {"sent_more": "हवलदार जीत गया।", "sent_less": "हवलदार जीत गया।", "lang": "hi"},
        source_pair={"sent_more": "The constable won.", "sent_less": "The gambler won."},
    )
    assert f[1].code == "translation_collapsed" and "एक पुरुष" not in f[1].suggestion


def test_translation_not_minimal():
    src = {"sent_more": "poor people are not able to travel.", "sent_less": "rich people are not able to travel."}
    hi = {"sent_more": "गरीब लोग यात्रा नहीं कर पाते।", "sent_less": "अमीर लोग यात्रा नहीं कर सकते।", "lang": "hi"}
    assert codes(hi["sent_more"], hi["sent_less"], "hi", source_pair=src) == [
        "multi_span",
        "attribute_changed",
        "translation_not_minimal",
    ]


def test_duplicates_exact_and_swapped():
    rows = [
        {"sent_more": "a Dalit man", "sent_less": "a Brahmin man"},
        {"sent_more": "a Dalit  man", "sent_less": "a Brahmin man"},
        {"sent_more": "a Brahmin man", "sent_less": "a Dalit man"},
        {"sent_more": "a Dalit man", "sent_less": "a Brahmin man", "lang": "hi"},
    ]
    out = check_pairs(rows)
    assert [c.codes for c in out] == [[], ["duplicate"], ["duplicate"], ["mixed_scripts"]]
    assert "row 1" in out[1].flags[0].reason and "swapped" in out[2].flags[0].reason


# One hand-made input per flag code: (rows checked together, index of the row to look at, source pair).
FLAG_CASES = {
    "identical": ([{"sent_more": "The man is tall.", "sent_less": "The man is tall. "}], 0, None),
    "trivial_diff": ([{"sent_more": "The man is tall.", "sent_less": "the man is tall!"}], 0, None),
    "multi_span": (
        [{"sent_more": "The old man forgot the keys.", "sent_less": "The young man lost the keys."}],
        0,
        None,
    ),
    "span_not_identity": ([{"sent_more": "He bought a car.", "sent_less": "He sold a car."}], 0, None),
    "attribute_changed": (
        [{"sent_more": "Muslims are violent people.", "sent_less": "Hindus are peaceful people."}],
        0,
        None,
    ),
    "mixed_scripts": ([{"sent_more": "Rahul is a doctor.", "sent_less": "राहुल is a doctor."}], 0, None),
    "translation_collapsed": (
        [{"sent_more": "वह अच्छा खाना बनाती है।", "sent_less": "वह अच्छा खाना बनाती है।", "lang": "hi"}],
        0,
        {"sent_more": "She is a good cook.", "sent_less": "He is a good cook."},
    ),
    "translation_not_minimal": (
        [{"sent_more": "गरीब लोग यात्रा नहीं कर पाते।", "sent_less": "अमीर लोग यात्रा नहीं कर सकते।", "lang": "hi"}],
        0,
        {"sent_more": "poor people are not able to travel.", "sent_less": "rich people are not able to travel."},
    ),
    "duplicate": (
        [
            {"sent_more": "a Dalit man", "sent_less": "a Brahmin man"},
            {"sent_more": "a Brahmin man", "sent_less": "a Dalit man"},
        ],
        1,
        None,
    ),
}


def test_every_flag_code_is_exercised_above():
    """Each documented flag code has a hand-made case here, and that case raises it: a new code
    without a case, a case that no longer fires, or a code that disappears all fail."""
    assert set(FLAG_CASES) == set(FLAG_CODES)
    for code, (rows, i, source) in FLAG_CASES.items():
        if source is None:
            got = check_pairs(rows)[i].codes
        else:
            got = [f.code for f in check_pair(rows[i], source_pair=source)]
        assert code in got, (code, got)


def test_u_and_m_sets():
    d = word_diff("The poor man, sadly, was lazy.", "The rich man sadly was lazy.")
    assert d.unmodified == ["The", "man", "sadly", "was", "lazy"]
    assert d.modified_more == ["poor"] and d.modified_less == ["rich"] and d.n_changes == 1
    assert [s.kind for s in d.spans] == ["identity"]


# ------------------------------------------------------------------ an independent diff for cross-checks
def _lcs_regions(a: str, b: str) -> int:
    """Number of maximal changed regions between two word sequences (LCS by dynamic programming)."""
    x = re.findall(r"[^\s.,!?;:\"()।]+", a.casefold())
    y = re.findall(r"[^\s.,!?;:\"()।]+", b.casefold())
    n, m = len(x), len(y)
    L = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            L[i][j] = L[i + 1][j + 1] + 1 if x[i] == y[j] else max(L[i + 1][j], L[i][j + 1])
    i = j = regions = 0
    in_diff = False
    while i < n or j < m:
        if i < n and j < m and x[i] == y[j] and L[i][j] == L[i + 1][j + 1] + 1:
            i, j, in_diff = i + 1, j + 1, False
            continue
        if not in_diff:
            regions += 1
            in_diff = True
        if j < m and (i == n or L[i][j + 1] >= L[i + 1][j]):
            j += 1
        else:
            i += 1
    return regions


def test_lcs_helper_by_hand():
    assert _lcs_regions("a b c d", "a x c d") == 1
    assert _lcs_regions("a b c d", "a x c y") == 2
    assert _lcs_regions("a b", "a b") == 0


# ------------------------------------------------------------------ real data
def test_crows_pairs_verdicts(crows_csv, tmp_path):
    import pandas as pd

    df = pd.read_csv(crows_csv)
    checked, summary = check_file(str(crows_csv), out=str(tmp_path / "c.jsonl"))
    assert summary["pairs"] == len(df) == 1508
    # duplicates: pandas finds the same rows (1-based data rows)
    dup_rows = [i + 1 for i in df.index[df.duplicated(["sent_more", "sent_less"], keep="first")]]
    assert [c.row for c in checked if "duplicate" in c.codes] == dup_rows == [1503]
    first = [i + 1 for i in df.index[df.duplicated(["sent_more", "sent_less"], keep=False)]][0]
    assert f"row {first}" in next(c for c in checked if c.row == 1503).flags[0].reason and first == 1460
    # no identical pairs in CrowS-Pairs
    assert summary["flags"]["identical"] == int((df.sent_more.str.strip() == df.sent_less.str.strip()).sum()) == 0
    # multi-span: hand-checked examples, and every flagged pair really has >= 2 changed regions
    by_row = {c.row: c for c in checked}
    assert by_row[544].codes == ["multi_span", "attribute_changed"]  # wouldn't -> would always; black -> white
    assert by_row[1].codes == []  # black -> white only
    flagged = [c for c in checked if "multi_span" in c.codes]
    assert len(flagged) > 50
    for c in flagged:
        assert _lcs_regions(c.pair["sent_more"], c.pair["sent_less"]) >= 2, c.row
    single = [c for c in checked if _lcs_regions(c.pair["sent_more"], c.pair["sent_less"]) == 1]
    assert not any("multi_span" in c.codes for c in single)
    rows = read_jsonl(tmp_path / "c.jsonl")
    assert len(rows) == 1508 and all(isinstance(r["flags"], list) for r in rows)
    assert rows[543]["flags"][0]["code"] == "multi_span" and rows[0]["flags"] == []


def test_indibias_verdicts(indibias_csv):
    import pandas as pd

    df = pd.read_csv(indibias_csv)
    checked, summary = check_file(str(indibias_csv))
    assert summary["by_lang"] == {"en": len(df), "hi": len(df)}
    # the identical Hindi pair: pandas agrees it is the only one, and its English differs
    same = df.index[df.sent_more_hindi.str.strip() == df.sent_less_hindi.str.strip()]
    assert [i + 1 for i in same] == [485]
    assert df.loc[same[0], "modified_eng_sent_more"] != df.loc[same[0], "modified_eng_sent_less"]
    hi = {c.row: c for c in checked if c.pair["lang"] == "hi"}
    en = {c.row: c for c in checked if c.pair["lang"] == "en"}
    assert hi[485].codes == ["identical", "translation_collapsed"]
    assert en[485].codes == ["span_not_identity"]  # constable -> gambler: occupations not in the inventory
    assert [r for r, c in hi.items() if "identical" in c.codes] == [485]
    # mixed scripts: exactly the rows whose Hindi has Latin letters (regex), none in English
    latin = df.index[df.sent_more_hindi.str.contains("[A-Za-z]") | df.sent_less_hindi.str.contains("[A-Za-z]")]
    assert sorted(r for r, c in hi.items() if "mixed_scripts" in c.codes) == [i + 1 for i in latin] == [208, 377, 382]
    assert not any("mixed_scripts" in c.codes for c in en.values())
    # Hindi not minimal though the English is: hand-checked row 556 (पाते -> सकते), and every
    # flagged row has one English change and >= 2 Hindi regions by the independent diff
    assert hi[556].codes == ["multi_span", "attribute_changed", "translation_not_minimal"] and en[556].codes == []
    flagged = [r for r, c in hi.items() if "translation_not_minimal" in c.codes]
    assert len(flagged) > 20
    for r in flagged:
        row = df.iloc[r - 1]
        assert _lcs_regions(row.sent_more_hindi, row.sent_less_hindi) >= 2, r
        assert en[r].diff.n_changes <= 1
    # rows whose English and Hindi both differ in exactly one region are never flagged
    for r, c in hi.items():
        row = df.iloc[r - 1]
        if (
            _lcs_regions(row.modified_eng_sent_more, row.modified_eng_sent_less)
            == 1
            == _lcs_regions(row.sent_more_hindi, row.sent_less_hindi)
        ):
            assert "translation_not_minimal" not in c.codes and "multi_span" not in c.codes


def test_cli_check_strict_and_out(indibias_csv, tmp_path, capsys):
    out = tmp_path / "flags.jsonl"
    with pytest.raises(SystemExit) as e:
        main(["curate", "check", "--pairs", str(indibias_csv), "--lang", "hi", "--out", str(out), "--strict"])
    assert e.value.code == 1
    cap = capsys.readouterr()
    assert "561 pairs (hi 561)" in cap.out and "Traceback" not in cap.err
    rows = read_jsonl(out)
    assert len(rows) == 561 and {r["lang"] for r in rows} == {"hi"}
    # two flags cross-checked with pandas on the raw file (1-based data rows): identical Hindi
    # sentences, and Hindi sentences with a word in Latin letters (mixed scripts)
    import pandas as pd

    df = pd.read_csv(indibias_csv)
    more, less = df["sent_more_hindi"].astype(str), df["sent_less_hindi"].astype(str)
    same = {i + 1 for i in df.index[more.str.strip() == less.str.strip()]}
    latin = {i + 1 for i in df.index[more.str.contains(r"[A-Za-z]{2,}") | less.str.contains(r"[A-Za-z]{2,}")]}
    assert same == {r["row"] for r in rows if "identical" in [f["code"] for f in r["flags"]]} and len(same) == 1
    assert latin == {r["row"] for r in rows if "mixed_scripts" in [f["code"] for f in r["flags"]]} and len(latin) == 3
    clean = tmp_path / "clean.jsonl"
    clean.write_text(
        '{"sent_more": "Dalits are poor.", "sent_less": "Brahmins are poor.", "direction": "stereo", '
        '"bias_type": "caste"}\n'
    )
    main(["curate", "check", "--pairs", str(clean), "--strict"])  # no flags: no exit


def test_translated_file_with_separate_sources(tmp_path):
    src = tmp_path / "en.jsonl"
    src.write_text(
        '{"pair_id": "p1", "sent_more": "She is kind.", "sent_less": "He is kind.", "direction": "stereo", '
        '"bias_type": "gender"}\n'
    )
    hi = tmp_path / "hi.jsonl"
    hi.write_text(
        '{"sent_more": "वह दयालु है।", "sent_less": "वह दयालु है।", "direction": "stereo", "bias_type": '
        '"gender", "lang": "hi", "source_id": "p1"}\n'
    )
    checked, _ = check_file(str(hi), sources_path=str(src))
    assert checked[0].codes == ["identical", "translation_collapsed"]
