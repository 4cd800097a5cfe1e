"""Machine-translation engines: the common interface, language codes per model family, the registry.

An engine translates a batch of texts from one language to another::

    engine = MT_ENGINES.create("hf", "facebook/nllb-200-distilled-600M", device="cpu")
    engine.translate(["The man is a doctor."], "en", "hi")

Engines are named on the command line as ``NAME`` or ``NAME:ARG`` (``googletrans``,
``hf:/models/nllb-200-distilled-600M``, ``llm:gemma3``); :func:`parse_engine_spec` splits them and
:func:`create_engine` builds them. Heavy imports (torch, transformers, googletrans, openai) happen
inside the engine modules, which the registry resolves lazily.

Language codes: biaskit speaks ISO 639-1 (``en``, ``hi``); every engine maps them to its own
scheme (FLORES-200 ``eng_Latn``/``hin_Deva`` for NLLB and IndicTrans2, ``en_XX``/``hi_IN`` for
mBART-50, plain ``en``/``hi`` for M2M-100 and Google).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from biaskit.errors import BiaskitError, InputError
from biaskit.options import say
from biaskit.registry import Registry


class MTError(BiaskitError):
    """A translation engine failed in a way the user can fix (offline, bad model path, ...)."""


# The codes of languages biaskit has no folder for (a language's folder, data/languages/<code>/language.json,
# gives its own: "mt" and "name", and is read first).
# ISO 639-1 -> FLORES-200 (NLLB-200, IndicTrans2): the usual Indian languages and pivots; unknown codes that
# already look like FLORES codes pass through.
FLORES200 = {
    "en": "eng_Latn",
    "ta": "tam_Taml",
    "te": "tel_Telu",
    "mr": "mar_Deva",
    "gu": "guj_Gujr",
    "kn": "kan_Knda",
    "ml": "mal_Mlym",
    "pa": "pan_Guru",
    "ur": "urd_Arab",
    "or": "ory_Orya",
    "as": "asm_Beng",
    "ne": "npi_Deva",
    "sa": "san_Deva",
    "fr": "fra_Latn",
    "de": "deu_Latn",
    "es": "spa_Latn",
    "zh": "zho_Hans",
    "ar": "arb_Arab",
}

# ISO 639-1 -> mBART-50 / mBART-cc25 language codes.
MBART50 = {
    "en": "en_XX",
    "ta": "ta_IN",
    "te": "te_IN",
    "mr": "mr_IN",
    "gu": "gu_IN",
    "ml": "ml_IN",
    "ur": "ur_PK",
    "ne": "ne_NP",
    "fr": "fr_XX",
    "de": "de_DE",
    "es": "es_XX",
    "zh": "zh_CN",
    "ar": "ar_AR",
}

# ISO 639-1 -> ISO 639-3, used by multilingual Marian (OPUS-MT) target tokens such as ``>>hin<<``.
ISO639_3 = {
    "en": "eng",
    "ta": "tam",
    "te": "tel",
    "mr": "mar",
    "gu": "guj",
    "kn": "kan",
    "ml": "mal",
    "pa": "pan",
    "ur": "urd",
    "or": "ori",
    "as": "asm",
    "ne": "nep",
    "sa": "san",
    "fr": "fra",
    "de": "deu",
    "es": "spa",
    "zh": "zho",
    "ar": "ara",
}

LANGUAGE_NAMES = {
    "en": "English",
    "ta": "Tamil",
    "te": "Telugu",
    "mr": "Marathi",
    "gu": "Gujarati",
    "kn": "Kannada",
    "ml": "Malayalam",
    "pa": "Punjabi",
    "ur": "Urdu",
    "or": "Odia",
    "as": "Assamese",
    "ne": "Nepali",
    "sa": "Sanskrit",
    "fr": "French",
    "de": "German",
    "es": "Spanish",
    "zh": "Chinese",
    "ar": "Arabic",
}


def _codes(table: dict[str, str], field: str) -> dict[str, str]:
    """``table`` with the codes the language folders give (``mt.<field>``; ``name`` for names)."""
    from biaskit import languages as L

    out = dict(table)
    for code, lg in L.all_languages().items():
        value = lg.info.name if field == "name" else getattr(lg.info.mt, field)
        if value:
            out[code] = value
    return out


def language_name(code: str) -> str:
    """The English name of a language as prompts say it (``bn`` -> ``Bengali``)."""
    return _codes(LANGUAGE_NAMES, "name").get(code.lower(), code)


def iso639_3(code: str) -> str:
    """The ISO 639-3 code of a language (OPUS-MT's ``>>xxx<<``); the code itself when unknown."""
    return _codes(ISO639_3, "iso639_3").get(code, code)


def flores_code(lang: str) -> str:
    """``bn`` -> ``ben_Beng``; a code that already has the ``xxx_Xxxx`` shape is returned unchanged."""
    if "_" in lang and len(lang) == 8:
        return lang
    table = _codes(FLORES200, "flores")
    try:
        return table[lang.lower()]
    except KeyError:
        raise MTError(
            f"no FLORES-200 code known for language '{lang}'. Fix: pass the FLORES code "
            f"itself (e.g. ben_Beng) or one of {', '.join(sorted(table))}."
        ) from None


def mbart_code(lang: str) -> str:
    if "_" in lang and len(lang) == 5:
        return lang
    table = _codes(MBART50, "mbart")
    try:
        return table[lang.lower()]
    except KeyError:
        raise MTError(
            f"no mBART-50 code known for language '{lang}'. Fix: pass the mBART code "
            f"itself (e.g. bn_IN) or one of {', '.join(sorted(table))}."
        ) from None


class MTEngine:
    """Base class. Subclasses set ``name`` and ``model`` and implement :meth:`translate`.

    ``translate_pair_batch`` is optional: engines that can translate both sentences of a minimal
    pair in one request (the LLM engine) override it and set ``joint_pairs = True``; each answer is
    ``{"sent_more", "sent_less", "provenance"}`` (``None`` where the engine gave none).
    """

    name: str = "base"
    model: str = ""
    joint_pairs: bool = False
    #: translates a whole StereoSet CAT in one request (``translate_cat_batch``; ``curate cat-translate``)
    joint_cats: bool = False

    def translate(self, texts: Sequence[str], src: str, tgt: str) -> list[str]:  # pragma: no cover
        raise NotImplementedError

    def translate_pair_batch(
        self, pairs: Sequence[tuple[str, str]], src: str, tgt: str
    ) -> list[dict[str, Any] | None]:  # pragma: no cover
        raise NotImplementedError

    def translate_cat_batch(self, items: Sequence[dict], src: str, tgt: str) -> list[dict | None]:  # pragma: no cover
        raise NotImplementedError

    def cache_params(self) -> dict[str, Any]:
        """Everything besides (engine, model, src, tgt, text) that changes the output."""
        return {}

    def target_cache_params(self, tgt: str) -> dict[str, Any]:
        """What else changes a translation into ``tgt`` (the ``llm`` engine: the language's worked
        examples and advice, ``data/languages/<code>/prompts.json``). Default: nothing."""
        return {}

    def cat_cache_params(self) -> dict[str, Any]:
        """What else changes a whole-CAT translation (``joint_cats`` engines: the CAT prompts)."""
        return {}

    def provenance(self) -> dict[str, Any]:
        return {"engine": self.name, "model": self.model, **self.cache_params()}

    def prompt_copies(self, what: str, source: dict[str, Any], output: dict[str, Any], src: str, tgt: str) -> list[str]:
        """The fields of ``output`` (a translation of ``source``: ``what`` is ``pair`` or ``cat``) that copy
        the engine's prompt rather than translate (a worked example, the instructions, the source text
        itself). Engines without a prompt copy none (default)."""
        return []

    def attach_output(self, out: Any) -> None:
        """Called with the candidates file before translating: engines that keep their own logs
        (the ``llm`` engine's error file and run log) put them beside it. Default: nothing."""

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}:{self.model}>"


MT_ENGINES: Registry = Registry("translation engine")
MT_ENGINES.register(
    "googletrans",
    "biaskit.curation.mt_googletrans:GoogleTransEngine",
    help="Google Translate through the googletrans package (needs the internet)",
)
MT_ENGINES.register(
    "hf",
    "biaskit.curation.mt_hf:HFEngine",
    help="any transformers seq2seq model (NLLB-200, IndicTrans2, Marian, mBART-50, M2M-100)",
)
MT_ENGINES.register(
    "llm",
    "biaskit.curation.mt_llm:LLMEngine",
    help="an OpenAI-compatible chat endpoint with a few-shot prompt from prompts/",
)


@dataclass(frozen=True)
class EngineSpec:
    name: str
    arg: str | None = None

    def __str__(self) -> str:
        return self.name + (f":{self.arg}" if self.arg else "")


def parse_engine_spec(spec: str) -> EngineSpec:
    """``"hf:/models/nllb"`` -> ``EngineSpec("hf", "/models/nllb")``; the name is checked."""
    spec = spec.strip()
    name, sep, arg = spec.partition(":")
    name = name.strip().lower()
    if not name:
        raise InputError(
            f"empty engine name in '{spec}'.",
            fix=f"use e.g. {say('engines', 'llm:MODEL')} (engines: googletrans, hf:PATH, llm:MODEL).",
        )
    MT_ENGINES.get(name)  # raises "unknown translation engine ... did you mean"
    return EngineSpec(name, arg.strip() or None)


def parse_engine_list(specs: str | Sequence[str]) -> list[EngineSpec]:
    if isinstance(specs, str):
        specs = [s for s in specs.split(",")]
    out = [parse_engine_spec(s) for s in specs if s.strip()]
    if not out:
        raise InputError(
            "no translation engine given.",
            fix=f"use e.g. {say('engines', 'llm:MODEL')} (engines: googletrans, hf:PATH, llm:MODEL).",
        )
    seen = set()
    for s in out:
        if str(s) in seen:
            raise InputError(f"engine '{s}' is listed twice.", fix="list each engine once.")
        seen.add(str(s))
    return out


def create_engine(spec: EngineSpec | str, **options: Any) -> MTEngine:
    """Build an engine; ``options`` not accepted by that engine are dropped (one options bag for all)."""
    import inspect

    if isinstance(spec, str):
        spec = parse_engine_spec(spec)
    cls = MT_ENGINES.get(spec.name)
    params = inspect.signature(cls).parameters
    accepted = {k: v for k, v in options.items() if k in params and v is not None}
    if spec.arg is not None:
        return cls(spec.arg, **accepted)
    required = [
        p
        for p in params.values()
        if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if required:
        raise InputError(
            f"engine '{spec.name}' needs a {required[0].name}: write {spec.name}:{required[0].name.upper()}.",
            fix="e.g. hf:facebook/nllb-200-distilled-600M or llm:gpt-4o-mini",
        )
    return cls(**accepted)
