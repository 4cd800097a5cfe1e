"""What a paper protocol is, and how one is applied to a run.

A :class:`Protocol` names every setting of one paper's setup that changes a number, each with the
section (or reference-code file) that says so. :func:`apply_protocol` turns a protocol, the options
a user gave explicitly (``None`` = not given) and the run's context (the scorer kind, the model
family, ...) into the values the run uses and the list of **deviations**: every explicit option that
differs from the protocol, in words ("sum of the log-probabilities instead of the per-token mean
(IndiBias §6.1)"). ``summary.json`` stores :meth:`Applied.as_dict`; reports print
:meth:`Applied.markdown`.

A run is **comparable** with the paper's figures only when it follows the protocol with no deviation,
nothing else makes it differ (:func:`mark_not_comparable`: the data is not the paper's, a documented
:class:`Difference` applies, a tokenizer dropped words, ...) and its checkpoint was verified as the
paper's (:meth:`Applied.verify_checkpoint`; docs/fidelity.md "What comparable means").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from biaskit.options import say
from biaskit.tables import md_table

NONE = "none"  # no paper protocol: biaskit's own defaults, labelled "not comparable with a paper"
AUTO = "auto"  # the protocol of the data's origin


@dataclass(frozen=True)
class Setting:
    """One setting that changes a number: its value under the protocol and where the paper says so."""

    key: str  # the run's name of the setting (what the protocol functions pass: "method", "tie_policy", ...)
    value: Any
    section: str  # "IndiBias §6.1", "reference metric.py (mask_unigram)"
    # the field of the command's options model that overrides it ("" = not an option): named where the
    # user is (biaskit.options.say: `--ties` under the command, `ties in [stages.evaluate]` under a run)
    option: str = ""
    words: Mapping[Any, str] = field(default_factory=dict)  # value -> words for reports
    when: Mapping[str, Any] = field(default_factory=dict)  # context the setting applies to
    command: str = ""  # "" = the protocol's only command
    # other values the paper's text also supports (value -> why): choosing one is reported, not a deviation
    readings: Mapping[Any, str] = field(default_factory=dict)

    def describe(self, v: Any) -> str:
        return self.words.get(v, f"`{v}`")

    def applies(self, command: str, context: Mapping[str, Any]) -> bool:
        if self.command and self.command != command:
            return False
        return _holds(self.when, context)


def _holds(when: Mapping[str, Any], context: Mapping[str, Any]) -> bool:
    """Every ``key: value`` of ``when`` holds in ``context`` (a tuple/list/set value: one of them)."""
    return all(
        context.get(k) == v if not isinstance(v, (tuple, list, set, frozenset)) else context.get(k) in v
        for k, v in when.items()
    )


@dataclass(frozen=True)
class Difference:
    """What biaskit knowingly does differently from the paper where it changes the number: a run whose
    context matches ``when`` (facts of its data and model, e.g. ``{"two_blank_cats": True}``) is not
    comparable, and says why in ``text`` (formatted with the context: ``{two_blank_cats_n}``)."""

    key: str
    text: str
    when: Mapping[str, Any]
    section: str = ""  # where biaskit documents it (docs/evaluation-cats-seat.md, ...)

    def applies(self, context: Mapping[str, Any]) -> bool:
        return _holds(self.when, context)


@dataclass(frozen=True)
class Protocol:
    """One paper setup by name (a module in this package each)."""

    name: str
    title: str  # "IndiBias minimal pairs (Sahoo et al. 2024, §6.1)"
    citation: str
    commands: tuple[str, ...]  # the evaluate commands it covers
    settings: tuple[Setting, ...]
    origin: str = ""  # the data it is the default for
    notes: tuple[str, ...] = ()  # what biaskit reads into the paper or does differently, and why
    figures: tuple[str, ...] = ()  # published tables a run is compared with (evaluation.published)
    differences: tuple[Difference, ...] = ()  # documented differences that make a run they apply to not comparable
    scope: Mapping[str, tuple[tuple[Any, ...], str]] = field(default_factory=dict)
    # context key -> (values the paper covers, the sentence for a run outside them), e.g. CrowS-Pairs:
    # {"kind": (("mlm",), "CrowS-Pairs scores masked LMs only (reference metric.py)")}

    def settings_for(self, command: str, context: Mapping[str, Any]) -> list[Setting]:
        return [s for s in self.settings if s.applies(command, context)]

    def value(self, key: str, command: str = "", context: Mapping[str, Any] | None = None) -> Any:
        """The protocol's value of ``key`` (first setting of that key that applies), or None."""
        for s in self.settings:
            if s.key == key and s.applies(command or (self.commands[0] if self.commands else ""), context or {}):
                return s.value
        return None


@dataclass
class Origin:
    """Where the data came from, as far as the readers can tell, and the protocol that goes with it."""

    protocol: str | None
    what: str


@dataclass
class Applied:
    """A protocol applied to one run: the values it uses, where each came from, the deviations, and
    whatever else makes the run not comparable with the paper's figures (``reasons``)."""

    name: str  # protocol name, or "none"
    chosen_by: str  # "--protocol", "the data's origin (...)", ...
    values: dict[str, Any]
    rows: list[dict[str, Any]]
    deviations: list[dict[str, Any]]
    notes: list[str]
    title: str = ""
    citation: str = ""
    figures: tuple[str, ...] = ()
    reasons: list[dict[str, Any]] = field(default_factory=list)  # {"kind", "text"}: see mark_not_comparable
    checkpoint: str = ""  # the paper's label of a checkpoint verified as the paper's ("" = not verified)
    differences: tuple[Difference, ...] = ()

    @property
    def follows_protocol(self) -> bool:
        """The run follows a paper's protocol with no deviation of its settings."""
        return self.name != NONE and not self.deviations

    @property
    def comparable(self) -> bool:
        """The run's numbers may be compared with the paper's figures: the protocol with no deviation,
        nothing else that changes the number, and a checkpoint verified as the paper's."""
        return self.follows_protocol and not self.reasons and bool(self.checkpoint)

    def copy(self) -> Applied:
        """An independent copy (one per model of a run: each has its own checkpoint)."""
        import copy

        return copy.deepcopy(self)

    def note_context(self, context: Mapping[str, Any]) -> None:
        """Mark the run not comparable for each documented :class:`Difference` that ``context`` matches."""
        for d in self.differences:
            if d.applies(context):
                text = d.text.format(**context) + (f" ({d.section})" if d.section else "")
                mark_not_comparable(self, "difference", text, key=d.key)

    def verify_checkpoint(self, label: str) -> None:
        """The loaded weights are the paper's checkpoint ``label`` (facts and weights' SHA-256 equal)."""
        self.checkpoint = label

    def why_not_comparable(self) -> list[dict[str, Any]]:
        """Every reason, in words: deviations, the other reasons, an unverified checkpoint."""
        if self.name == NONE:
            return [{"kind": "protocol", "text": "no paper protocol (biaskit's own defaults)"}]
        out = [{"kind": "setting", "text": d["text"]} for d in self.deviations]
        out += [{"kind": r["kind"], "text": r["text"]} for r in self.reasons]
        if not self.checkpoint and not any(r["kind"] == "checkpoint" for r in self.reasons):
            out.append({"kind": "checkpoint", "text": "checkpoint: not verified as the paper's"})
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "citation": self.citation,
            "chosen_by": self.chosen_by,
            "comparable": self.comparable,
            "follows_protocol": self.follows_protocol,
            "why_not_comparable": [] if self.comparable else self.why_not_comparable(),
            "checkpoint_verified": self.checkpoint or None,
            "settings": self.rows,
            "deviations": self.deviations,
            "notes": self.notes,
        }

    def headline(self) -> str:
        """One line for the terminal: the protocol, how many deviations, and whether comparable."""
        if self.name == NONE:
            return f"protocol: none ({self.chosen_by}): biaskit's own defaults, not comparable with a paper's figures"
        dev = self.deviations
        return (
            f"protocol: {self.name} ({self.title}; chosen by {self.chosen_by}); "
            + ("no deviation" if not dev else f"{len(dev)} deviation(s): " + "; ".join(d["text"] for d in dev))
            + "; "
            + verdict(self.as_dict())
        )

    def markdown(self) -> str:
        return render_protocol(self.as_dict())


def mark_not_comparable(target: Applied | dict, kind: str, text: str, *, key: str = "") -> None:
    """The one way to say that something makes a run not comparable with the paper's figures.

    ``target``: a run's :class:`Applied`, or its ``summary["protocol"]`` dict once written (both are
    updated the same way). ``kind`` names the condition (``data``, ``checkpoint``, ``difference``,
    ``tokenizer``, ``scores``, ...), ``text`` says why in words (shown in the terminal, report.md and
    summary.json). Marking the same text twice records it once."""
    reason = {"kind": kind, "text": text, **({"key": key} if key else {})}
    if isinstance(target, Applied):
        if all(r["text"] != text for r in target.reasons):
            target.reasons.append(reason)
        return
    if target.get("name") == NONE or not target:
        return
    why = target.setdefault("why_not_comparable", [])
    if all(r["text"] != text for r in why):
        why.append({"kind": kind, "text": text})
    target["comparable"] = False


def verdict(d: Mapping[str, Any]) -> str:
    """Whether a run's ``summary["protocol"]`` is comparable with the paper's figures, in one phrase."""
    if d.get("comparable"):
        return f"comparable with the paper's figures (checkpoint {d.get('checkpoint_verified')} verified)"
    why = [w["text"] for w in d.get("why_not_comparable") or [] if w.get("kind") != "setting"]
    devs = len(d.get("deviations") or [])
    parts = ([f"{devs} deviation(s)"] if devs else []) + why
    return "not comparable with the paper's figures" + (": " + "; ".join(parts) if parts else "")


def render_protocol(d: Mapping[str, Any]) -> str:
    """The report section of a run's ``summary["protocol"]``: the protocol, every setting with its
    source, every deviation in words, and what biaskit knowingly does differently."""
    if not d:
        return ""
    lines = ["## Protocol", ""]
    devs = d.get("deviations") or []
    if d.get("name") == NONE:
        lines += [
            f"**none** ({d.get('chosen_by')}): biaskit's own defaults; the numbers are **not comparable "
            "with a paper's figures**.",
            "",
        ]
    else:
        lines += [f"**{d.get('name')}**: {d.get('title')} (chosen by {d.get('chosen_by')}). {d.get('citation')}", ""]
        if devs:
            lines += (
                [
                    f"**{len(devs)} deviation(s) from the protocol** (not the paper's setup, so not comparable "
                    "with its figures):",
                    "",
                ]
                + [f"- {x['text']}" for x in devs]
                + [""]
            )
        else:
            lines += ["No deviation from the protocol.", ""]
        if d.get("comparable"):
            lines += [f"**Comparable with the paper's figures**: {verdict(d)}.", ""]
        else:
            why = [w["text"] for w in d.get("why_not_comparable") or [] if w.get("kind") != "setting"]
            lines += (
                ['**Not comparable with the paper\'s figures** (docs/fidelity.md, "What comparable means"):', ""]
                + ([f"- {len(devs)} deviation(s) from the protocol (above)"] if devs else [])
                + [f"- {w}" for w in why]
                + [""]
            )
    rows = d.get("settings") or []
    if rows:
        lines += [
            md_table(
                ["setting", "value", "from", "paper's value", "source"],
                [
                    [r["key"], r["words"], r["from"], r.get("protocol_words") or "—", r.get("section") or "—"]
                    for r in rows
                ],
            ),
            "",
        ]
    if d.get("notes"):
        lines += ["What biaskit knowingly does differently (docs/fidelity.md):", ""]
        lines += [f"- {n}" for n in d["notes"]] + [""]
    return "\n".join(lines)


def apply_protocol(
    protocol: Protocol | None,
    command: str,
    given: Mapping[str, Any],
    defaults: Mapping[str, Any],
    *,
    context: Mapping[str, Any] | None = None,
    chosen_by: str = "",
    words: Mapping[str, Mapping[Any, str]] | None = None,
    extra_notes: Sequence[str] = (),
) -> Applied:
    """The values a run uses: an explicit option (``given[key]`` not None) wins, else the protocol's
    value, else biaskit's default (``defaults``). Every explicit option that differs from the
    protocol's value is a deviation. Options are named where the user is (:func:`with_options`);
    ``chosen_by`` defaults to the ``protocol`` option."""
    context = dict(context or {})
    values: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    deviations: list[dict[str, Any]] = []
    covered: set[str] = set()
    for s in protocol.settings_for(command, context) if protocol else []:
        if s.key in covered:
            continue
        covered.add(s.key)
        values[s.key], row, deviation = _setting(s, given.get(s.key))
        rows.append(row)
        if deviation is not None:
            deviations.append(deviation)
    deviations += _out_of_scope(protocol, context)
    for k, d in defaults.items():
        if k not in covered:
            values[k], row = _default(k, d, given.get(k), (words or {}).get(k) or {})
            rows.append(row)
    for k, g in given.items():  # options the caller passes through without a default or a setting
        if k not in values and g is not None:
            values[k] = g
    notes = [with_options(n) for n in (protocol.notes if protocol else ())] + list(extra_notes)
    return Applied(
        name=protocol.name if protocol else NONE,
        chosen_by=chosen_by or say("protocol"),
        values=values,
        rows=rows,
        deviations=deviations,
        notes=notes,
        title=protocol.title if protocol else "",
        citation=protocol.citation if protocol else "",
        figures=protocol.figures if protocol else (),
        differences=protocol.differences if protocol else (),
    )


def _setting(s: Setting, g: Any) -> tuple[Any, dict[str, Any], dict[str, Any] | None]:
    """One setting of the protocol with the option given (``g``; None: not given): the value used, its
    row of ``summary["protocol"]["settings"]``, and its deviation (None: it follows the protocol, or
    ``g`` is another reading of the paper's text)."""
    used = s.value if g is None else g
    option = say(s.option) if s.option else ""
    row = {
        "key": s.key,
        "value": used,
        "words": s.describe(used),
        "from": "protocol" if g is None else f"option {option or s.key}",
        "protocol_value": s.value,
        "protocol_words": s.describe(s.value),
        "section": s.section,
        "option": option,
    }
    if g is None or g == s.value:
        return used, row, None
    if g in s.readings:
        row["from"] = f"option {option or s.key} (another reading of {s.section.split(':')[0]})"
        row["reading"] = s.readings[g]
        return used, row, None
    set_to = say(s.option, g) if s.option else f"{s.key} {g}"
    deviation = {
        "key": s.key,
        "option": option,
        "used": g,
        "protocol_value": s.value,
        "section": s.section,
        "text": f"{s.describe(g)} instead of {s.describe(s.value)} ({s.section}; {set_to})",
    }
    return used, row, deviation


def _out_of_scope(protocol: Protocol | None, context: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A deviation for each fact of the run outside what the paper covers (``Protocol.scope``)."""
    out = []
    for k, (allowed, text) in ((protocol.scope if protocol else {}) or {}).items():
        if k in context and context[k] not in allowed:
            out.append(
                {
                    "key": k,
                    "option": "",
                    "used": context[k],
                    "protocol_value": list(allowed),
                    "section": "",
                    "text": text,
                }
            )
    return out


def _default(k: str, d: Any, g: Any, words: Mapping[Any, str]) -> tuple[Any, dict[str, Any]]:
    """A setting no protocol decides: the option given, else biaskit's default; its row."""
    used = d if g is None else g
    row = {
        "key": k,
        "value": used,
        "words": words.get(used, f"`{used}`"),
        "from": "biaskit default" if g is None else "option",
        "protocol_value": None,
        "protocol_words": None,
        "section": None,
        "option": None,
    }
    return used, row


_OPTION = re.compile(r"\{option:([a-z_]+)(?:=([^}]*))?\}")


def with_options(text: str) -> str:
    """``text`` with each ``{option:FIELD}`` / ``{option:FIELD=VALUE}`` naming an option where the user
    is (:func:`biaskit.options.say`): ``--unit word-token`` under the command, ``unit = "word-token"
    in [stages.evaluate] of biaskit.toml`` under ``biaskit run``."""
    return _OPTION.sub(lambda m: say(m[1]) if m[2] is None else say(m[1], m[2]), text)
