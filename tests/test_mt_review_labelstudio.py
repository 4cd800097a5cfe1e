"""The translation review loop end to end on a real Label Studio (slow, labelstudio):

translate (googletrans client against the local HTTPS stand-in) -> push --kind translation ->
two real annotator accounts answer through the API (choice by slot letter, a corrected sentence)
-> pull -> apply -> released Hindi pairs, a pair returned to review, the report; then the returned
pair is pushed again into the same project without duplicating the others.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("label_studio_sdk")
pytest.importorskip("googletrans")

from mt_helpers import EN_PAIRS, GoogleStandIn

pytestmark = [pytest.mark.slow, pytest.mark.labelstudio]

TABLE = {
    "The man is a doctor.": "आदमी एक डॉक्टर है।",
    "The woman is a doctor.": "औरत एक चिकित्सक है।",
    "man": "आदमी",
    "woman": "औरत",
    "He is a nurse.": "वह एक नर्स है।",
    "She is a nurse.": "वह एक नर्स है।",
    "He": "वह",
    "She": "वह",
    "Priya went to Delhi.": "प्रिया दिल्ली गई।",
    "Rahul went to Delhi.": "राहुल दिल्ली गया।",
}
PAIRS = list(EN_PAIRS)


def _annotate(server, token, task_id, slot=None, corrected=None):
    from label_studio_sdk import LabelStudio

    result = []
    if slot is not None:
        result.append({"from_name": "choice", "to_name": "src_more", "type": "choices", "value": {"choices": [slot]}})
    for side, text in (corrected or {}).items():
        to = "src_more" if side == "corrected_more" else "src_less"
        result.append({"from_name": side, "to_name": to, "type": "textarea", "value": {"text": [text]}})
    LabelStudio(base_url=server["url"], api_key=token).annotations.create(id=task_id, result=result)


def test_review_loop_on_real_label_studio(ls_server, ls_annotator, tmp_path):
    from biaskit.annotation.apply import run_apply
    from biaskit.annotation.labelstudio import find_project, pull, push
    from biaskit.annotation.options import ApplyOptions, PullOptions, PushOptions
    from biaskit.curation.mt_googletrans import GoogleTransEngine
    from biaskit.curation.translate import translate_pairs
    from label_studio_sdk import LabelStudio

    from biaskit.cache import DiskCache
    from biaskit.io import read_jsonl

    standin = GoogleStandIn(tmp_path, TABLE)
    try:
        g = GoogleTransEngine(standin.host, verify=str(standin.cert), backoff=0.01)
        from biaskit.curation.mt_base import MTEngine

        class Literal(MTEngine):  # a second "engine": word-for-word outputs we control
            name, model = "literal", "v1"

            def translate(self, texts, src, tgt):
                return [
                    {
                        "The man is a doctor.": "पुरुष डॉक्टर है।",
                        "The woman is a doctor.": "महिला डॉक्टर है।",
                        "He is a nurse.": "वह नर्स है।",
                        "She is a nurse.": "वह नर्स है।",
                        "Priya went to Delhi.": "प्रिया दिल्ली गयी।",
                        "Rahul went to Delhi.": "राहुल दिल्ली गया।",
                    }.get(t, "")
                    for t in texts
                ]

        cands = tmp_path / "cands.jsonl"
        translate_pairs(
            PAIRS, "hi", [g, Literal()], cands, cache=DiskCache(tmp_path / "c.db", namespace="mt"), align=False
        )
    finally:
        standin.close()

    project = "biaskit mt review e2e"
    rep = push(
        PushOptions.from_kwargs(data=cands, kind="translation", project=project, url=ls_server["url"], seed=7),
        token=ls_server["token"],
    )
    assert rep.n_imported == 3
    admin = LabelStudio(base_url=ls_server["url"], api_key=ls_server["token"])
    proj = find_project(admin, project)
    tasks = {t.data["biaskit_id"]: t for t in admin.tasks.list(project=proj.id)}
    assert set(tasks) == {p.pair_id for p in PAIRS}

    def slot_of(pid, engine):
        return next(s["slot"] for s in tasks[pid].data["biaskit_slots"] if s["engine"] == engine)

    a = ls_annotator("mt-a@example.com")
    b = ls_annotator("mt-b@example.com")
    doc, nurse, priya = (p.pair_id for p in PAIRS)
    # doctor: both pick the literal engine (clean, minimal)
    _annotate(ls_server, a["token"], tasks[doc].id, slot_of(doc, "literal"))
    _annotate(ls_server, b["token"], tasks[doc].id, slot_of(doc, "literal"))
    # nurse: A picks google but fixes the collapsed gender explicitly -> released, edited
    _annotate(
        ls_server,
        a["token"],
        tasks[nurse].id,
        slot_of(nurse, "googletrans"),
        {"corrected_more": "एक पुरुष एक नर्स है।", "corrected_less": "एक महिला एक नर्स है।"},
    )
    # priya: A picks google, B picks literal -> tie, returned to review
    _annotate(ls_server, a["token"], tasks[priya].id, slot_of(priya, "googletrans"))
    _annotate(ls_server, b["token"], tasks[priya].id, slot_of(priya, "literal"))

    judg = tmp_path / "judgments.jsonl"
    pr = pull(PullOptions.from_kwargs(project=project, out=judg, url=ls_server["url"]), token=ls_server["token"])
    assert pr.n_annotations == 5
    res = run_apply(
        ApplyOptions.from_kwargs(
            kind="translation",
            data=cands,
            aggregated=None,
            out=tmp_path / "hi.jsonl",
            judgments=judg,
            report_dir=tmp_path / "report",
        )
    )
    by_src = {p.source_id: p for p in res.accepted}
    assert set(by_src) == {doc, nurse}
    d = by_src[doc].meta["review"]
    assert (d["winner_engine"], d["edited"], d["agreement"]) == ("literal", False, 1.0)
    assert {r["worker"] for r in d["reviewers"]} == {"mt-a@example.com", "mt-b@example.com"}
    n = by_src[nurse]
    assert (n.sent_more, n.sent_less) == ("एक पुरुष एक नर्स है।", "एक महिला एक नर्स है।")
    assert n.meta["review"]["winner_engine"] == "googletrans" and n.meta["review"]["edited"]
    assert n.meta["review"]["editors"] == ["mt-a@example.com"]
    assert {f["code"] for f in n.meta["review"]["flags_before"]} >= {"identical", "translation_collapsed"}
    assert n.meta["review"]["flags_after"] == []
    assert [r["pair_id"] for r in res.files["needs_review"]] == [priya]
    report = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    assert report["engines"]["literal:v1"]["final_wins"] == 1
    assert report["engines"]["googletrans:google-translate"]["final_wins"] == 1
    assert report["edit_rate"] == 0.5

    # the returned pair goes back into the same project: it is already there, nothing duplicates
    back = res.paths["needs_review"]
    assert [r["pair_id"] for r in read_jsonl(back)] == [priya]
    rep2 = push(
        PushOptions.from_kwargs(data=back, kind="translation", project=project, url=ls_server["url"], seed=7),
        token=ls_server["token"],
    )
    assert rep2.n_imported == 0 and rep2.n_existing == 1
