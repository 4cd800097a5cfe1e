"""Languages as data: one folder per language, ``data/languages/<code>/`` (docs/languages.md).

Everything biaskit knows about a language is read from its folder, never written in code:

``language.json`` (:class:`Language`)
    its names (the English ``name`` goes into the LLM/MT prompts), its script (a Unicode script
    name: the checks' "is this written in the right script"), the font that renders it, the note on
    its annotator guidelines (``data/guidelines/<kind>.<code>.md``), the codes MT engines use, the
    length ratio a translation may have, its columns in IndiBias' CSV, the grammar the pair builder
    and the minimal-pair checker need (gender agreement, the oblique plural, pronouns that collapse
    in translation) and the exonyms the named-entity check of translations accepts;
``inventory.json`` (:class:`LanguageInventory`)
    its forms of the identity terms (by the term ids of ``data/inventories/identity_terms.json``),
    surface variants, the intersectional groups' names, gendered words;
``names.json`` (:class:`LanguageNames`)
    first names by religion and gender (or by gender only), with their Latin spelling;
``seat.json`` (:class:`LanguageSeat`)
    SEAT's bleached templates, the words for "person"/"people" and its forms of the SEAT lexicons'
    words;
``prompts.json`` (:class:`LanguagePrompts`)
    what the translation prompts (``prompts/translate_*.toml``) show when they translate into the
    language: per task, its worked examples (a source and its translation into the language) and
    the advice that names the language's own words (he/she both become one pronoun).

``data/languages/languages.json`` names the *source* language (English: the benchmarks are written
in it and translated from it) and the *default target* (the language a translation goes into when
none is named). Only these two codes are read as defaults anywhere in the code.

:func:`check_language` (``biaskit data check-language CODE``) checks one folder against these
schemas and against the rest of biaskit's data.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import InputError
from .options import Options, option
from .paths import component_problem

LANGUAGE_FILE = "language.json"
INVENTORY_FILE = "inventory.json"
NAMES_FILE = "names.json"
SEAT_FILE = "seat.json"
PROMPTS_FILE = "prompts.json"
INDEX_FILE = "languages.json"
FILES = (LANGUAGE_FILE, INVENTORY_FILE, NAMES_FILE, SEAT_FILE, PROMPTS_FILE)
#: what "bn" may look like: ISO 639-1/-3, optionally with a region or script subtag (pt-BR, sr-Latn)
CODE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ------------------------------------------------------------------------------------------ language.json
class MTCodes(_Model):
    """The codes MT engines name the language by (None: the engine cannot translate it)."""

    flores: str | None = Field(None, pattern=r"^[a-z]{3}_[A-Z][a-z]{3}$", description="NLLB-200 / IndicTrans2")
    mbart: str | None = Field(None, pattern=r"^[a-z]{2}_[A-Z]{2}$", description="mBART-50")
    iso639_3: str | None = Field(None, pattern=r"^[a-z]{3}$", description="OPUS-MT's >>xxx<< target tokens")


class Participles(_Model):
    """Participles that agree with the subject's gender, recognised before an auxiliary:
    ``feminine`` maps a masculine ending to the feminine one (ता -> ती), ``masculine`` a feminine
    ending to the masculine ``[singular, plural]`` endings (ती -> ता / ते)."""

    before: list[str]
    feminine: dict[str, str] = {}
    masculine: dict[str, tuple[str, str]] = {}


class PluralMasculine(_Model):
    """A feminine plural agreement word becomes masculine plural: a word ending in ``feminine`` whose
    ``masculine`` form is a listed agreement word takes the ``plural`` ending (रहती -> रहते)."""

    feminine: str
    masculine: str
    plural: str


class Pronouns(_Model):
    """How the source language's gendered pronouns come out in this language: ``collapsed`` words
    (he and she both become वह), ``collapsed_to`` (how a message names them) and ``explicit`` (what
    names the person's gender instead: {"m": ..., "f": ...})."""

    collapsed_to: str
    collapsed: list[str] = []
    explicit: dict[str, str] = {}

    @field_validator("explicit")
    @classmethod
    def _genders(cls, v: dict[str, str]) -> dict[str, str]:
        if v and set(v) != {"m", "f"}:
            raise ValueError("give both genders: {'m': ..., 'f': ...}")
        return v


class Grammar(_Model):
    """What the pair builder and the checker need of the grammar (every field optional)."""

    case: bool = Field(False, description="the script has letter case: words are compared case-folded")
    clitics: str | None = Field(None, description="regex of clitics compared apart from their word ('s)")
    ambiguous: dict[str, list[str]] = Field({}, description="a gendered word that pairs with several (her)")
    gender_endings: str | None = Field(
        None, description="regex (stem)(ending): two words with one stem and different endings agree in gender"
    )
    oblique_plural: str | None = Field(None, description="the oblique plural's ending (a form 'obl_pl')")
    swap_other_nouns: bool = Field(True, description="a gender swap also swaps other gendered nouns")
    plural_masculine: PluralMasculine | None = None
    participles: Participles | None = None
    pronouns: Pronouns | None = None

    @field_validator("clitics", "gender_endings")
    @classmethod
    def _regex(cls, v: str | None, info) -> str | None:
        if v is None:
            return v
        try:
            rx = re.compile(v)
        except re.error as exc:
            raise ValueError(f"not a regular expression ({exc})") from None
        if info.field_name == "gender_endings" and rx.groups != 2:
            raise ValueError("needs two groups: (stem)(ending)")
        return v


class Language(_Model):
    """``data/languages/<code>/language.json``."""

    doc: str | None = Field(None, alias="_doc")
    code: str = Field(pattern=CODE.pattern)
    name: str = Field(min_length=1, description="the English name, as LLM/MT prompts say it")
    native_name: str = Field(min_length=1)
    script: str = Field(min_length=1, description="Unicode script name, e.g. Devanagari, Bengali, Latin")
    font: str = Field(min_length=1, description="a font family that renders the script (fontconfig's name)")
    guidelines: str = Field(min_length=1, description="who wrote data/guidelines/<kind>.<code>.md, reviewed or not")
    mt: MTCodes = MTCodes()
    length_ratio: tuple[float, float] | None = Field(
        None, description="characters of a translation / characters of the English source, [low, high]"
    )
    indibias_columns: tuple[str, str] | None = Field(None, description="IndiBias CSV: [S1 column, S2 column]")
    grammar: Grammar = Grammar()
    exonyms: dict[str, list[str]] = Field({}, description="English word (lower case) -> its renderings by meaning")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @property
    def display_name(self) -> str:
        """``Hindi (Devanagari)``; ``English`` for a Latin-script language."""
        return self.name if self.script == "Latin" else f"{self.name} ({self.script})"


# ------------------------------------------------------------------------------------------ inventory.json
class Gendered(_Model):
    """Gendered words as ``[masculine, feminine]``: ``identity`` words name a person (man/woman,
    he/she), ``agreement`` words only agree with one (Hindi था/थी)."""

    identity: list[tuple[str, str]] = []
    agreement: list[tuple[str, str]] = []


class LanguageInventory(_Model):
    """``data/languages/<code>/inventory.json``."""

    doc: str | None = Field(None, alias="_doc")
    forms: dict[str, dict[str, str]] = Field({}, description="term id -> {sg, pl, obl_pl}")
    variants: dict[str, list[str]] = Field({}, description="term id -> other surface forms")
    groups: dict[str, str] = Field({}, description="intersectional group id -> its name")
    gendered: Gendered = Gendered()

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


# ------------------------------------------------------------------------------------------ names.json
class LanguageNames(_Model):
    """``data/languages/<code>/names.json``: ``names[group][gender]`` (group: a religion, or ``all``),
    each name a string or ``{"en": Latin spelling, "<code>": native spelling}``; ``origin`` says whose
    names they are (``india``: drawn by ``curate adapt --names india*``; ``us``: names to replace)."""

    doc: str | None = Field(None, alias="_doc")
    origin: str = Field(min_length=1)
    names: dict[str, dict[str, list[str | dict[str, str]]]]

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


# ------------------------------------------------------------------------------------------ seat.json
class LanguageSeat(_Model):
    """``data/languages/<code>/seat.json``."""

    doc: str | None = Field(None, alias="_doc")
    person: tuple[str, str] | None = Field(None, description="[person, people]")
    plural_modifier: Literal["sg", "pl"] = Field(
        "pl", description="the group's form before the word for people: pl where adjectives agree with it"
    )
    templates: dict[str, list[str]] = Field({}, description="bleached templates by part of speech")
    word_list_templates: dict[str, list[str]] = Field({}, description="templates for word-list tests")
    lexicons: dict[str, dict[str, Any]] = Field({}, description="SEAT set -> this language's forms of its words")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


# ------------------------------------------------------------------------------------------ prompts.json
class PromptExample(_Model):
    """One worked example of a translation prompt: ``source``, the request's texts in the source
    language by the names the prompt's example format gives them (``sent_more``, ``sent_less``;
    ``text``; ``target``, ``context``, ...), and ``translation``, the reply in this language by the
    fields of the prompt's JSON reply (shown as that JSON)."""

    source: dict[str, str]
    translation: dict[str, str]


class TaskPrompt(_Model):
    """What one translation task's prompt shows for this language: ``examples`` (none: the prompt
    shows no worked example) and ``advice`` (put into the prompt's ``{advice}`` as written, line
    breaks kept; none: the template's general wording, its ``[defaults]``)."""

    advice: str | None = Field(None, min_length=1, description="the prompt's {advice}, naming this language's words")
    examples: list[PromptExample] = []


class LanguagePrompts(_Model):
    """``data/languages/<code>/prompts.json``: by translation task (the name of the task and of its
    template: ``translate_pair``, ``translate_sentence``, ``translate_cat_intrasentence``,
    ``translate_cat_intersentence``)."""

    doc: str | None = Field(None, alias="_doc")
    tasks: dict[str, TaskPrompt] = {}

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


MODELS: dict[str, type[BaseModel]] = {
    LANGUAGE_FILE: Language,
    INVENTORY_FILE: LanguageInventory,
    NAMES_FILE: LanguageNames,
    SEAT_FILE: LanguageSeat,
    PROMPTS_FILE: LanguagePrompts,
}


# ------------------------------------------------------------------------------------------ reading
def languages_dir() -> Path:
    from importlib.resources import files

    return Path(str(files("biaskit.data") / "languages"))


def _read_json(path: Path) -> Any:
    from .io import read_json

    return read_json(path, missing_fix="write it (docs/languages.md, 'Adding a language').")


def _field_of(err: Any) -> str:
    return ".".join(str(x) for x in err.get("loc", ())) or "(the file)"


def _parse(path: Path, model: type[BaseModel]) -> Any:
    raw = _read_json(path)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        e = exc.errors()[0]
        raise InputError(
            f"{e['msg']}.",
            path=path,
            column=_field_of(e),
            fix="see the schema in docs/languages.md (biaskit.languages." + model.__name__ + ").",
        ) from None


@dataclass(frozen=True)
class LanguageData:
    """One language folder, read: ``info`` (language.json) and the optional other files."""

    info: Language
    inventory: LanguageInventory
    names: LanguageNames | None
    seat: LanguageSeat
    folder: Path
    prompts: LanguagePrompts = LanguagePrompts()

    @property
    def code(self) -> str:
        return self.info.code


@dataclass(frozen=True)
class Index:
    source: str
    default_target: str


@functools.cache
def _index(root: str) -> Index:
    raw = _read_json(Path(root) / INDEX_FILE)
    for key in ("source", "default_target"):
        if not isinstance(raw.get(key), str) or not (Path(root) / raw[key]).is_dir():
            raise InputError(
                f"'{key}' must name a language folder.",
                path=Path(root) / INDEX_FILE,
                column=key,
                fix='name a folder of data/languages, e.g. "en".',
            )
    return Index(raw["source"], raw["default_target"])


def read_language(folder: Path) -> LanguageData:
    """Read one language folder (``language.json`` required, the other files optional)."""
    info = _parse(folder / LANGUAGE_FILE, Language)
    if info.code != folder.name:
        raise InputError(
            f"code '{info.code}' is not the folder's name '{folder.name}'.",
            path=folder / LANGUAGE_FILE,
            column="code",
            fix=f'write "code": "{folder.name}", or rename the folder.',
        )
    inv = _parse(folder / INVENTORY_FILE, LanguageInventory) if (folder / INVENTORY_FILE).exists() else None
    names = _parse(folder / NAMES_FILE, LanguageNames) if (folder / NAMES_FILE).exists() else None
    seat = _parse(folder / SEAT_FILE, LanguageSeat) if (folder / SEAT_FILE).exists() else None
    prompts = _parse(folder / PROMPTS_FILE, LanguagePrompts) if (folder / PROMPTS_FILE).exists() else None
    return LanguageData(
        info, inv or LanguageInventory(), names, seat or LanguageSeat(), folder, prompts or LanguagePrompts()
    )


@functools.cache
def _all(root: str) -> dict[str, LanguageData]:
    base = Path(root)
    return {
        d.name: read_language(d)
        for d in sorted(base.iterdir(), key=lambda p: p.name)
        if d.is_dir() and (d / LANGUAGE_FILE).exists()
    }


def all_languages() -> dict[str, LanguageData]:
    """Every language folder, by code (sorted)."""
    return _all(str(languages_dir()))


def codes() -> list[str]:
    """The codes of every language folder: the source language first, then the others sorted."""
    src = source_code()
    return [src] + [c for c in all_languages() if c != src]


def source_code() -> str:
    """The source language's code (``languages.json``: ``source``)."""
    return _index(str(languages_dir())).source


def default_target() -> str:
    """The default target language's code (``languages.json``: ``default_target``)."""
    return _index(str(languages_dir())).default_target


def get(code: str | None) -> LanguageData | None:
    """The language with this code (case-insensitive), or None when biaskit has no folder for it."""
    if not code:
        return None
    return all_languages().get(code.lower())


def language(code: str, *, what: str = "language") -> LanguageData:
    """The language with this code, or an error naming the languages there are."""
    lg = get(code)
    if lg is None:
        raise InputError(
            f"no {what} data for '{code}'.",
            fix=f"use one of {', '.join(codes())}, or add data/languages/{code}/ (docs/languages.md).",
        )
    return lg


def by_name(name: str | None) -> LanguageData | None:
    """The language named ``name``: its code, or its English name as prompts say it (``Bengali``)."""
    if not name:
        return None
    key = name.casefold()
    return get(name) or next((lg for lg in all_languages().values() if lg.info.name.casefold() == key), None)


def task_prompt(language: str | None, task: str) -> TaskPrompt | None:
    """What the prompt of the translation ``task`` shows for ``language`` (a code or an English name):
    its ``prompts.json`` entry, None when the language has no folder or no entry for the task."""
    lg = by_name(language)
    return lg.prompts.tasks.get(task) if lg is not None else None


def name_of(code: str) -> str:
    """The English name of a language (``bn`` -> ``Bengali``), the code itself when unknown."""
    lg = get(code)
    return lg.info.name if lg is not None else code


def script_of_language(code: str | None) -> str | None:
    """The script a language is written in, from its folder (None: no folder)."""
    lg = get(code)
    return lg.info.script if lg is not None else None


def expected_script(lang: str | None) -> str | None:
    """The script a language is written in: its folder's (``data/languages``), else the common script
    of a few more languages biaskit has no folder for (None: unknown)."""
    return script_of_language(lang) or OTHER_SCRIPTS.get((lang or "").lower())


# Scripts of languages without a folder in data/languages (ISO 639-1 -> Unicode script name).
OTHER_SCRIPTS = {
    "mr": "Devanagari",
    "ne": "Devanagari",
    "sa": "Devanagari",
    "as": "Bengali",
    "pa": "Gurmukhi",
    "gu": "Gujarati",
    "or": "Oriya",
    "ta": "Tamil",
    "te": "Telugu",
    "kn": "Kannada",
    "ml": "Malayalam",
    "ur": "Arabic",
    "ar": "Arabic",
    "zh": "Han",
    "fr": "Latin",
    "de": "Latin",
    "es": "Latin",
}


def grammar(code: str | None) -> Grammar:
    """A language's grammar facts; the source language's for a language without a folder."""
    lg = get(code) or get(source_code())
    return lg.info.grammar if lg is not None else Grammar()


def by_script(text: str) -> str:
    """The language of ``text`` told by its script: the first language other than the source whose
    script has a letter in ``text`` (the default target first), else the source language. For
    readers of files that do not say their language (SEAT tests, candidate names)."""
    from .textutil import scripts

    have = scripts(text)
    src, dflt = source_code(), default_target()
    for code in [dflt] + [c for c in codes() if c not in (src, dflt)]:
        lg = get(code)
        if lg is not None and have.get(lg.info.script):
            return code
    return src


def indibias_languages() -> list[str]:
    """The languages with columns in IndiBias' CSV, the source language first."""
    return [c for c in codes() if (lg := get(c)) is not None and lg.info.indibias_columns]


def seat_languages() -> list[str]:
    """The languages with SEAT templates (bleaching and person words), the source language first."""
    return [c for c in codes() if (lg := get(c)) is not None and lg.seat.templates and lg.seat.person]


# ------------------------------------------------------------------------------------------ checking
@dataclass(frozen=True)
class Problem:
    """One thing wrong with a language folder: the file, the field, what and how to fix it."""

    path: Path
    field: str | None
    message: str
    fix: str
    warning: bool = False

    def error(self) -> InputError:
        return InputError(self.message, path=self.path, column=self.field, fix=self.fix)

    def __str__(self) -> str:
        return ("warning: " if self.warning else "") + str(self.error())


@dataclass
class LanguageReport:
    """What :func:`check_language` found (``problems``) and counted (``counts``)."""

    code: str
    folder: Path
    problems: list[Problem]
    counts: dict[str, int]

    @property
    def ok(self) -> bool:
        return not any(not p.warning for p in self.problems)


def check_language(code: str, root: str | Path | None = None) -> LanguageReport:
    """Check ``data/languages/<code>/`` (or ``root/<code>/``): every file against its schema, then
    against biaskit's other data (term ids, SEAT lists, guidelines of every task kind, the script of
    every form and name, the font installed). A pure function: the CLI prints what it returns."""
    base = Path(root) if root else languages_dir()
    folder = base / code
    probs: list[Problem] = []
    counts: dict[str, int] = {}
    if not CODE.match(code):
        return LanguageReport(
            code,
            folder,
            [Problem(folder, None, f"'{code}' is not a language code.", "use an ISO 639 code, e.g. bn.")],
            counts,
        )
    if not (folder / LANGUAGE_FILE).exists():
        probs.append(
            Problem(
                folder / LANGUAGE_FILE,
                None,
                "no language.json.",
                "write it (docs/languages.md, 'Adding a language').",
            )
        )
        return LanguageReport(code, folder, probs, counts)
    parsed: dict[str, Any] = {}
    for fname, model in MODELS.items():
        path = folder / fname
        if not path.exists():
            if fname not in (LANGUAGE_FILE, PROMPTS_FILE):  # no prompts.json: said per task, below
                probs.append(Problem(path, None, f"no {fname}.", f"write {fname} (docs/languages.md).", warning=True))
            continue
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            probs.append(Problem(path, None, f"not readable JSON ({exc}).", "fix the JSON syntax."))
            continue
        try:
            parsed[fname] = model.model_validate(raw)
        except ValidationError as exc:
            for e in exc.errors():
                probs.append(Problem(path, _field_of(e), f"{e['msg']}.", f"see biaskit.languages.{model.__name__}."))
    info = parsed.get(LANGUAGE_FILE)
    if info is None:
        return LanguageReport(code, folder, probs, counts)
    probs += list(_check_info(info, folder))
    if INVENTORY_FILE in parsed:
        probs += list(_check_inventory(parsed[INVENTORY_FILE], info, folder / INVENTORY_FILE, counts))
    if NAMES_FILE in parsed:
        probs += list(_check_names(parsed[NAMES_FILE], info, folder / NAMES_FILE, base, counts))
    if SEAT_FILE in parsed:
        probs += list(_check_seat(parsed[SEAT_FILE], info, folder / SEAT_FILE, counts))
    if info.code != source_code() and (PROMPTS_FILE in parsed or not (folder / PROMPTS_FILE).exists()):
        prompts = parsed.get(PROMPTS_FILE) or LanguagePrompts()
        probs += list(_check_prompts(prompts, info, folder / PROMPTS_FILE, counts))
    probs += list(_check_guidelines(info, folder / LANGUAGE_FILE, counts))
    return LanguageReport(code, folder, probs, counts)


def _check_info(info: Language, folder: Path) -> Iterator[Problem]:
    path = folder / LANGUAGE_FILE
    if info.code != folder.name:
        yield Problem(path, "code", f"code '{info.code}' is not the folder's name.", f'write "code": "{folder.name}".')
    if not _known_script(info.script):
        yield Problem(
            path, "script", f"'{info.script}' is not a Unicode script name.", "e.g. Latin, Devanagari, Bengali, Tamil."
        )
    if info.length_ratio and not 0 < info.length_ratio[0] < info.length_ratio[1]:
        yield Problem(path, "length_ratio", "needs 0 < low < high.", "e.g. [0.5, 2.0].")
    fonts = _installed_fonts()
    if fonts is not None and info.font.casefold() not in fonts:
        yield Problem(
            path,
            "font",
            f"the font '{info.font}' is not installed here (fc-list).",
            "install the Debian package that has it (e.g. fonts-noto-core) and add it to the Makefile's APT_PACKAGES.",
            warning=True,
        )
    g = info.grammar
    for word, alts in g.ambiguous.items():
        if not alts:
            yield Problem(path, f"grammar.ambiguous.{word}", "no words it pairs with.", "list them, or drop it.")


def _check_inventory(inv: LanguageInventory, info: Language, path: Path, counts: dict[str, int]) -> Iterator[Problem]:
    term_ids, group_ids = structure_ids()
    script = info.script
    for tid, forms in inv.forms.items():
        if tid not in term_ids:
            yield Problem(
                path, f"forms.{tid}", f"unknown term id '{tid}'.", "use ids of data/inventories/identity_terms.json."
            )
            continue
        if not forms.get("sg"):
            yield Problem(path, f"forms.{tid}", "no 'sg' form.", 'give at least {"sg": ...}.')
        bad = sorted(set(forms) - {"sg", "pl", "obl_pl"})
        if bad:
            yield Problem(path, f"forms.{tid}.{bad[0]}", f"unknown form '{bad[0]}'.", "use sg, pl or obl_pl.")
        for form, text in forms.items():
            yield from _script_problem(path, f"forms.{tid}.{form}", text, script)
    for tid, variants in inv.variants.items():
        if tid not in term_ids:
            yield Problem(path, f"variants.{tid}", f"unknown term id '{tid}'.", "use ids of identity_terms.json.")
        for i, text in enumerate(variants):
            yield from _script_problem(path, f"variants.{tid}[{i}]", text, script)
    for gid, text in inv.groups.items():
        if gid not in group_ids:
            yield Problem(path, f"groups.{gid}", f"unknown group id '{gid}'.", "use ids of intersectional_groups.json.")
        yield from _script_problem(path, f"groups.{gid}", text, script)
    for key in ("identity", "agreement"):
        for i, pair in enumerate(getattr(inv.gendered, key)):
            for text in pair:
                yield from _script_problem(path, f"gendered.{key}[{i}]", text, script)
    missing = sorted(term_ids - set(inv.forms))
    if inv.forms and missing:
        yield Problem(
            path,
            "forms",
            f"{len(missing)} of {len(term_ids)} terms have no form ({', '.join(missing[:5])}"
            + (", ..." if len(missing) > 5 else "")
            + "): they are not recognised in this language.",
            "add their forms, if the language has words for them.",
            warning=True,
        )
    counts["terms"] = len(term_ids) if info.code == source_code() else len(inv.forms)
    counts["gendered pairs"] = len(inv.gendered.identity) + len(inv.gendered.agreement)


def structure_ids() -> tuple[set[str], set[str]]:
    """The term ids and the intersectional group ids of biaskit's inventory (``data/inventories``)."""
    inv = languages_dir().parent / "inventories"
    ident = _read_json(inv / "identity_terms.json")
    inter = _read_json(inv / "intersectional_groups.json")
    terms = {e["id"] for entries in (ident.get("axes") or {}).values() for e in entries if "id" in e}
    return terms, {g["id"] for g in inter.get("groups") or [] if "id" in g}


def _check_names(
    names: LanguageNames, info: Language, path: Path, base: Path, counts: dict[str, int]
) -> Iterator[Problem]:
    seen: dict[str, tuple[str, str]] = {}
    n = 0
    for group, by_gender in names.names.items():
        for gender, lst in by_gender.items():
            if gender not in ("m", "f"):
                yield Problem(path, f"names.{group}.{gender}", f"unknown gender '{gender}'.", "use m or f.")
            for i, entry in enumerate(lst):
                n += 1
                where = f"names.{group}.{gender}[{i}]"
                if isinstance(entry, str):
                    yield from _script_problem(path, where, entry, info.script)
                    continue
                if set(entry) - {"en", info.code} or not entry.get("en"):
                    yield Problem(
                        path, where, "a name is {'en': Latin spelling, '" + info.code + "': native}.", "fix the keys."
                    )
                    continue
                yield from _script_problem(path, where + ".en", entry["en"], "Latin")
                if entry.get(info.code):
                    yield from _script_problem(path, f"{where}.{info.code}", entry[info.code], info.script)
                seen[entry["en"].casefold()] = (group, gender)
    # a Latin spelling another language lists must name the same religion and gender
    for other in sorted(base.iterdir()) if base.is_dir() else []:
        if other.name == info.code or not (other / NAMES_FILE).exists():
            continue
        try:
            theirs = LanguageNames.model_validate(json.loads((other / NAMES_FILE).read_text(encoding="utf-8")))
        except (ValidationError, ValueError, OSError):
            continue
        if theirs.origin != names.origin:
            continue
        for group, by_gender in theirs.names.items():
            for gender, lst in by_gender.items():
                for entry in lst:
                    latin = entry.get("en") if isinstance(entry, dict) else None
                    mine = seen.get(latin.casefold()) if latin else None
                    if mine is not None and mine != (group, gender):
                        yield Problem(
                            path,
                            f"names.{mine[0]}.{mine[1]}",
                            f"'{latin}' is {group}/{gender} in {other.name}/{NAMES_FILE}.",
                            "list a name under one religion and gender in every language.",
                        )
    counts["names"] = n


def _check_seat(seat: LanguageSeat, info: Language, path: Path, counts: dict[str, int]) -> Iterator[Problem]:
    import string

    src = get(source_code())
    kinds = set(src.seat.templates) if src is not None else set()
    for kind, temps in seat.templates.items():
        if kinds and kind not in kinds:
            yield Problem(
                path, f"templates.{kind}", f"unknown part of speech '{kind}'.", f"use {', '.join(sorted(kinds))}."
            )
        want = len(src.seat.templates.get(kind, [])) if src is not None else len(temps)
        if src is not None and info.code != src.code and len(temps) != want:
            yield Problem(
                path,
                f"templates.{kind}",
                f"{len(temps)} templates, the English list has {want}.",
                "render every English template once, in its order (position i = template i).",
            )
        for i, t in enumerate(temps):
            try:
                fields = {f for _, f, _, _ in string.Formatter().parse(t) if f}
            except ValueError as exc:
                yield Problem(path, f"templates.{kind}[{i}]", f"bad template ({exc}).", "use {s}, {p} or a verb form.")
                continue
            if not fields:
                yield Problem(path, f"templates.{kind}[{i}]", "no {s} or {p} in the template.", "put the word in it.")
    for kind, temps in seat.word_list_templates.items():
        for i, t in enumerate(temps):
            if "{x}" not in t and "{X}" not in t:
                yield Problem(
                    path, f"word_list_templates.{kind}[{i}]", "no {x} in the template.", "put the term in it."
                )
    for name, renders in seat.lexicons.items():
        bad = component_problem(name)  # a key of the file names a folder of data/seat: never a path of its own
        if bad:
            yield Problem(path, f"lexicons.{name}", f"SEAT set name {name!r} {bad}.", "use a folder name of data/seat.")
            continue
        lex_path = languages_dir().parent / "seat" / name / "lexicon.json"
        if not lex_path.exists():
            yield Problem(path, f"lexicons.{name}", f"no SEAT set '{name}'.", "use a folder of data/seat.")
            continue
        lex = json.loads(lex_path.read_text(encoding="utf-8"))
        lists = lex.get("lists") or lex.get("sets") or {}
        for lst, words in renders.items():
            if lst not in lists:
                yield Problem(path, f"lexicons.{name}.{lst}", f"no list '{lst}' in {name}.", f"use {', '.join(lists)}.")
                continue
            if isinstance(words, dict) and "words" in words:
                en = {e["en"] for e in lists[lst].get("words", [])}
                for w in words["words"]:
                    if w not in en:
                        yield Problem(
                            path,
                            f"lexicons.{name}.{lst}.{w}",
                            f"'{w}' is not a word of {lst}.",
                            "use its English words.",
                        )
        counts[f"SEAT lists ({name})"] = len(renders)


#: the names an example format fills besides the example's source texts (docs/languages.md, prompts.json)
EXAMPLE_VALUES = frozenset({"source_language", "target_language", "reply"})


@functools.cache
def example_formats() -> dict[str, tuple[frozenset[str], tuple[str, ...]]]:
    """The packaged templates that show a language's worked examples (``prompts/*.toml`` with an
    ``[template] example``): template id -> (the fields of an example's ``source``: the format's
    placeholders, the fields of its ``translation``: the reply schema's ``required``)."""
    import tomllib
    from importlib.resources import files

    out: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {}
    for f in sorted(Path(str(files("biaskit.prompts"))).glob("*.toml")):
        obj = tomllib.loads(f.read_text(encoding="utf-8"))
        fmt = (obj.get("template") or {}).get("example")
        if isinstance(fmt, str):
            names = set(re.findall(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})", fmt)) - EXAMPLE_VALUES
            out[str(obj.get("id"))] = (frozenset(names), tuple((obj.get("schema") or {}).get("required") or ()))
    return out


def _check_prompts(prompts: LanguagePrompts, info: Language, path: Path, counts: dict[str, int]) -> Iterator[Problem]:
    formats = example_formats()
    src = get(source_code())
    src_script = src.info.script if src is not None else "Latin"
    n = 0
    for task, entry in prompts.tasks.items():
        if task not in formats:
            yield Problem(
                path,
                f"tasks.{task}",
                f"no translation prompt '{task}' shows a language's worked examples.",
                f"use {', '.join(sorted(formats))}.",
            )
            continue
        fields, reply = formats[task]
        if entry.advice:
            yield from _target_script_problem(path, f"tasks.{task}.advice", entry.advice, info.script, need=False)
        for i, ex in enumerate(entry.examples):
            where = f"tasks.{task}.examples[{i}]"
            for part, have, want, script in (
                ("source", ex.source, fields, src_script),
                ("translation", ex.translation, set(reply), info.script),
            ):
                if set(have) != set(want):
                    yield Problem(
                        path,
                        f"{where}.{part}",
                        f"the fields {', '.join(sorted(have)) or 'none'}; the prompt's example shows "
                        f"{', '.join(sorted(want))}.",
                        f"give exactly {', '.join(sorted(want))}.",
                    )
                for k, text in have.items():
                    if not text.strip():
                        yield Problem(path, f"{where}.{part}.{k}", "empty.", "write the text.")
                    elif part == "source":
                        yield from _script_problem(path, f"{where}.{part}.{k}", text, script)
                    else:
                        yield from _target_script_problem(path, f"{where}.{part}.{k}", text, script)
        n += len(entry.examples)
    missing = [t for t in sorted(formats) if t not in prompts.tasks or not prompts.tasks[t].examples]
    if missing:
        yield Problem(
            path,
            f"tasks.{missing[0]}",
            f"no worked examples for {', '.join(missing)}: the prompt into {info.name} shows none "
            "(a small model follows a worked example more closely than the instructions).",
            f"write them in {info.name}: the situations of data/languages/{default_target()}/{PROMPTS_FILE} "
            "(docs/languages.md).",
            warning=True,
        )
    counts["prompt examples"] = n


def _check_guidelines(info: Language, path: Path, counts: dict[str, int]) -> Iterator[Problem]:
    gdir = languages_dir().parent / "guidelines"
    kinds = sorted({p.name.split(".")[0] for p in gdir.glob("*.md")})
    have = [k for k in kinds if (gdir / f"{k}.{info.code}.md").exists()]
    missing = [k for k in kinds if k not in have]
    if missing:
        yield Problem(
            gdir / f"{missing[0]}.{info.code}.md",
            None,
            f"no guidelines for the task kind(s) {', '.join(missing)} in this language.",
            "write them in the language (reviewers read them in Label Studio's instructions panel).",
            warning=True,
        )
    counts["guideline files"] = len(have)


def _known_script(name: str) -> bool:
    import regex

    try:
        regex.compile(rf"\p{{Script={name}}}")
    except regex.error:
        return False
    return True


def _script_problem(path: Path, where: str, text: str, script: str) -> Iterator[Problem]:
    from .textutil import scripts

    have = {k for k, v in scripts(text).items() if v}
    if have and have != {script}:
        yield Problem(
            path,
            where,
            f"'{text}' is written in {' + '.join(sorted(have))}, not {script}.",
            f"write it in {script} script.",
        )


def _target_script_problem(path: Path, where: str, text: str, script: str, *, need: bool = True) -> Iterator[Problem]:
    """A text in the language that may hold Latin words (the placeholder BLANK, the English words of
    an advice) but no other script than the language's, and (``need``) a letter of it."""
    from .textutil import scripts

    have = {k for k, v in scripts(text).items() if v}
    other = sorted(have - {script, "Latin"})
    if other or (need and script not in have):
        yield Problem(
            path,
            where,
            f"'{text}' is written in {' + '.join(sorted(have)) or 'no script'}, not {script}.",
            f"write the language's words in {script} script.",
        )


@functools.cache
def _installed_fonts() -> frozenset[str] | None:
    """Font families fontconfig knows (case-folded), None when fc-list is not there."""
    import shutil
    import subprocess

    if shutil.which("fc-list") is None:
        return None
    out = subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True, check=False).stdout
    return frozenset(f.strip().casefold() for line in out.splitlines() for f in line.split(","))


# ------------------------------------------------------------------------------------------ the command's options
class CheckLanguageOptions(Options):
    """``biaskit data check-language CODE`` (:func:`check_language`)."""

    command: ClassVar[str] = "data check-language"

    root: Path | None = option(
        None,
        "--dir",
        path="in_dir",
        help="A folder of language folders to check instead of biaskit's data/languages (a language being "
        "written elsewhere; it is checked against biaskit's inventory, SEAT sets and guidelines).",
    )
    strict: bool = option(False, "--strict", help="Count warnings (missing files or forms, font) as problems.")
