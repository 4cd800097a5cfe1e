"""The project files ``biaskit init`` writes: commented, valid as written (tests load every variant).

``generate``: IndiBias-style (LLM tuples -> people validate -> LLM sentences and anti-stereotype
sentences -> people keep / fix / drop them -> pairs -> check -> people validate); ``adapt``:
CrowS-Pairs adapted to the Indian context -> check -> people validate; ``stereoset``: StereoSet-style
CATs (LLM drafts -> five validators, >= 3 of 5). Each optionally translates into a target language
(``lang``: any folder of data/languages; default: the default target, Hindi) with blind review, then
releases, makes SEAT tests from the release's groups and evaluates.

``trial=True`` (``biaskit init --trial``) writes the same stages sized for a first try on one machine
(2 CPU cores, 3 people, the LLM served locally by ``biaskit llm serve``): a few groups or target terms,
few items per request, overlap 3, one request at a time with a long timeout, evaluation of a small
sample with SEAT on a sentence encoder. Each trial value has its full-size value in the comment beside
it, so the full project is one comment away. docs/pipeline.md, "A first trial", gives the commands and
the measured time.
"""

from __future__ import annotations

TEMPLATES = ("generate", "adapt", "stereoset")

_HEAD = """\
# biaskit project file. `biaskit run` executes the stages below in this order (whatever the order of
# the tables), each reading the previous one's output, and skips a stage whose inputs and options have
# not changed. `biaskit status` shows where the project stands. Reference: docs/pipeline.md.
#
# Secrets never go in this file (it is shared and committed): the LLM key comes from $OPENAI_API_KEY,
# the Label Studio token from $LABEL_STUDIO_API_KEY. Paths are relative to this file's folder.

[project]
name = "{name}"{pad}# names the release and the Label Studio projects
version = "0.1.0"               # the release version (X.Y.Z)
"""

_LLM = """
[llm]                           # the LLM the {users} call
model = "gpt-4o-mini"           # the model id your endpoint serves
# base_url = "http://127.0.0.1:8000/v1"   # a local OpenAI-compatible server (llama.cpp, vLLM, Ollama)
concurrency = 4                 # requests in flight
# backend = "dummy"             # offline, meaningless replies: to try the pipeline without an endpoint
"""

_LS = """
[labelstudio]
# url = "http://127.0.0.1:8080" # default: $LABEL_STUDIO_URL, else the one `biaskit annotate serve` runs
"""

_GENERATE = """
[stages.tuples]                 # `biaskit curate tuples`: attributes per identity term (IndiBias step 1)
axes = ["caste", "religion"]
polarity = "both"               # positive, negative or both
n = 10                          # attributes per identity and polarity
# identities = {{ caste = ["Dalit", "Brahmin"] }}   # default: the inventory's terms of each axis

[stages.tuple_review]           # people: is each (identity, attribute) a prevalent stereotype?
overlap = 3                     # annotators per task; `biaskit run` waits until every task has them
# min_agree = 2                 # votes needed to accept (default: a strict majority)

[stages.sentences]              # `biaskit curate sentences`: sentences that state each kept tuple
per_tuple = 5

[stages.antistereo]             # `curate sentences --mode anti`: sentences that go against each kept tuple
per_tuple = 5                   # (they become antistereo pairs; IndiBias sec. 4.2.2)

[stages.sentence_review]        # people: keep / fix (in place) / drop each sentence
overlap = 3

[stages.pairs]                  # `biaskit curate pairs`: swap the identity for its comparable group
# llm_fallback = true           # ask the LLM when the identity is not found in the sentence
"""

_ADAPT = """
[stages.adapt]                  # `biaskit curate adapt`: CrowS-Pairs in the Indian context
input = "crows_pairs_anonymized.csv"   # `biaskit data download crows-pairs --out .`
keep = ["gender", "age", "disability", "physical-appearance", "socioeconomic"]
names = "india"                 # Indian first names for US ones (india-hindu, india-muslim, ..., none)
"""

_CHECK = """
[stages.check]                  # `biaskit curate check`: the minimal-pair checker
drop_flagged = false            # false: flagged pairs go to people, with the checker's reasons

[stages.pair_review]            # people: stereo / antistereo / not a valid pair, concerns
overlap = 3
"""

_HINDI = """
[stages.translate]              # `biaskit curate translate`: candidates for a blind review
target = "{lang}"
engines = ["llm"]               # "llm" = the [llm] model; also "googletrans", "hf:PATH" (e.g. NLLB-200)

[stages.translation_review]     # people: pick the better candidate, or correct it
overlap = 2
"""

_CATS = """
[stages.cats]                   # `biaskit curate cats`: the LLM drafts CATs per target term (StereoSet sec. 4.2)
domains = "stereoset"           # gender, profession, race, religion; or "indibias", or a list of axes
per_target = 5                  # CATs asked for per target term and type (intra- and intersentence)
society = "India"               # whose stereotypes

[stages.cat_review]             # people: label each option; a CAT stays when >= 3 of 5 agree on all three
overlap = 5
"""

_CAT_HINDI = """
[stages.cat_translate]          # `biaskit curate cat-translate`: context, BLANK and options translated together
target = "{lang}"
engines = ["llm"]

[stages.cat_translation_review] # people: pick the better candidate, correct it in place (BLANK kept once)
overlap = 2
"""

_TAIL = """
[stages.release]                # `biaskit release build` + `biaskit release verify`
# license = "cc-by-4.0"         # a Hugging Face licence id (the card says "unknown" without one)
# card_text = "card.md"         # the card sections people write (## Motivation, ## Maintenance, ...)
# out = "release/{name}-0.1.0"  # the default: release/NAME-VERSION

[stages.seat_tests]             # IndiBias-style SEAT tests (sec. 5) from the release's groups (langs: en + target)
# min_records = 1               # released records a pair of groups needs

[stages.evaluate]               # `biaskit evaluate pairs|cats|seat` on the release
models = ["gemma3-270m"]        # model folders, .gguf files, cached hub names or aliases
scorer = "clm"                  # clm (causal LMs) or mlm (masked LMs)
split = "test"
# seat_models = ["all-minilm-l6-v2"]   # sentence encoders for SEAT (default: models)
"""


# the release's CATs are StereoSet's design, scored under its protocol (release.json): intersentence
# CATs need a next-sentence-prediction head, which a causal LM such as gemma3-270m lacks
_CAT_EVAL = """cat_split = "intrasentence"     # intersentence needs an NSP head: nsp_head = "FILE" scores both
"""


# ------------------------------------------------------------------------------------------ trial size
_TRIAL_HEAD = """
# A TRIAL-SIZED project (`biaskit init --trial`): it runs end to end on 2 CPU cores with 3 people. The
# value in the comment beside a trial setting is the full-size one. Commands: docs/pipeline.md, "A first trial".
"""

_TRIAL_LLM = """
[llm]                           # the LLM the {users} call
model = "gemma3-270m"           # `biaskit llm serve` runs it on this machine; with no base_url, this project finds it
concurrency = 1                 # a local server answers one request at a time (full size: 4)
timeout = 300                   # seconds a request may take: 20-60 s each on 2 CPU cores (full size: 120)
# base_url = "http://127.0.0.1:8000/v1"   # another OpenAI-compatible server (llama.cpp, vLLM, Ollama)
# model = "gpt-4o-mini"         # a hosted model instead (the key comes from $OPENAI_API_KEY)
"""

_TRIAL_GENERATE = """
[stages.tuples]                 # `biaskit curate tuples`: attributes per identity term (IndiBias step 1)
axes = ["religion"]             # (full size: ["caste", "religion"])
identities = {{ religion = ["Muslim", "Hindu"] }}   # two groups (full size: leave out: every term of the axes)
polarity = "both"               # positive, negative or both
n = 3                           # attributes per identity and polarity (full size: 10)

[stages.tuple_review]           # people: is each (identity, attribute) a prevalent stereotype?
overlap = 3                     # annotators per task; `biaskit run` waits until every task has them

[stages.sentences]              # `biaskit curate sentences`: sentences that state each kept tuple
per_tuple = 2                   # (full size: 5)

[stages.antistereo]             # `curate sentences --mode anti`: sentences that go against each kept tuple
per_tuple = 2                   # (full size: 5)

[stages.sentence_review]        # people: keep / fix (in place) / drop each sentence
overlap = 3

[stages.pairs]                  # `biaskit curate pairs`: swap the identity for its comparable group
"""

_TRIAL_ADAPT = """
[stages.adapt]                  # `biaskit curate adapt`: CrowS-Pairs in the Indian context
input = "crows_pairs_anonymized.csv"   # `biaskit data download crows-pairs --out .`
keep = ["disability"]           # (full size: ["gender", "age", "disability", "physical-appearance", "socioeconomic"])
limit = 10                      # the first 10 adapted pairs (full size: leave out)
names = "india"                 # Indian first names for US ones (india-hindu, india-muslim, ..., none)
"""

_TRIAL_HINDI = """
[stages.translate]              # `biaskit curate translate`: candidates for a blind review
target = "{lang}"
engines = ["llm"]               # "llm" = the [llm] model; also "googletrans", "hf:PATH" (e.g. NLLB-200)
llm = {{ max_tokens = 200 }}      # two short sentences (full size: leave out)

[stages.translation_review]     # people: pick the better candidate, or correct it
overlap = 2                     # 2 of the 3 people
"""

_TRIAL_CATS = """
[stages.cats]                   # `biaskit curate cats`: the LLM drafts CATs per target term (StereoSet sec. 4.2)
domains = "religion"            # one domain (full size: "stereoset": gender, profession, race, religion)
targets = ["Muslim", "Hindu"]   # two target terms (full size: leave out: every term of the domains)
per_target = 3                  # CATs asked for per target term and type (full size: 5)
society = "India"               # whose stereotypes
llm = {{ max_tokens = 400 }}      # three CATs per request (full size: leave out)

[stages.cat_review]             # people: label each option; a CAT stays when all 3 give every option its writer's label
overlap = 3                     # (full size: 5, StereoSet's: a CAT stays when >= 3 of the 5 agree)
"""

_TRIAL_CAT_HINDI = """
[stages.cat_translate]          # `biaskit curate cat-translate`: context, BLANK and options translated together
target = "{lang}"
engines = ["llm"]
llm = {{ max_tokens = 200 }}      # one CAT per request (full size: leave out)

[stages.cat_translation_review] # people: pick the better candidate, correct it in place (BLANK kept once)
overlap = 2                     # 2 of the 3 people
"""

_TRIAL_TAIL = """
[stages.release]                # `biaskit release build` + `biaskit release verify`
# license = "cc-by-4.0"         # a Hugging Face licence id (the card says "unknown" without one)
# out = "release/{name}-0.1.0"  # the default: release/NAME-VERSION

[stages.seat_tests]             # IndiBias-style SEAT tests (sec. 5) from the release's groups (langs: en + target)

[stages.evaluate]               # `biaskit evaluate pairs|cats|seat` on the release
models = ["gemma3-270m"]        # model folders, .gguf files, cached hub names or aliases
scorer = "clm"                  # clm (causal LMs) or mlm (masked LMs)
split = "test"
limit = 100                     # the first 100 pairs / CATs of each language (full size: leave out)
seat_models = ["all-minilm-l6-v2"]   # SEAT on a sentence encoder (the MiniLM from PyPI), not the causal LM
n_samples = 10000               # SEAT permutations (full size: leave out: 100,000)
"""


def _trial_template(name: str, template: str, hindi: bool, users: str | None, lang: str) -> str:
    text = _TRIAL_HEAD + (_TRIAL_LLM.format(users=users) if users else "") + _LS
    if template == "stereoset":
        text += _TRIAL_CATS.format() + (_TRIAL_CAT_HINDI.format(lang=lang) if hindi else "")
    else:
        text += (
            _TRIAL_GENERATE.format() if template == "generate" else _TRIAL_ADAPT
        ) + _CHECK  # the same at trial size
        if hindi:
            text += _TRIAL_HINDI.format(lang=lang)
    text += _TRIAL_TAIL.format(name=name)
    if template == "stereoset":  # [stages.evaluate] is the last table: its keys go on
        text += _CAT_EVAL
    return text


def project_template(
    name: str, *, template: str = "generate", hindi: bool = True, trial: bool = False, lang: str | None = None
) -> str:
    """The text of a new ``biaskit.toml``; ``hindi``: translate (into ``lang``, default: the default target
    language of ``data/languages/languages.json``), with a blind review; ``trial``: sized for a first try
    (see the module docstring)."""
    from biaskit import languages as L

    if template not in TEMPLATES:
        raise ValueError(f"unknown template {template!r}")
    lang = lang or L.default_target()
    pad = " " * max(1, 24 - len(name))
    text = _HEAD.format(name=name, pad=pad)
    if template != "adapt" or hindi:
        users = {
            ("generate", True): "generation and translation stages",
            ("generate", False): "generation stages",
            ("adapt", True): "translation stage",
            ("stereoset", True): "CAT drafting and translation stages",
            ("stereoset", False): "CAT drafting stage",
        }[(template, hindi)]
        if trial:
            return _localised(text + _trial_template(name, template, hindi, users, lang), lang)
        text += _LLM.format(users=users)
    elif trial:
        return _localised(text + _trial_template(name, template, hindi, None, lang), lang)
    text += _LS
    if template == "stereoset":
        text += _CATS + (_CAT_HINDI.format(lang=lang) if hindi else "")
    else:
        text += _GENERATE.format() if template == "generate" else _ADAPT
        text += _CHECK
        if hindi:
            text += _HINDI.format(lang=lang)
    text += _TAIL.format(name=name)
    if template == "stereoset":  # [stages.evaluate] is the last table: its keys go on
        text += _CAT_EVAL
    return _localised(text, lang)


def _localised(text: str, lang: str) -> str:
    from biaskit import languages as L

    return _for_language(text, lang) if lang != L.default_target() else text


def _for_language(text: str, lang: str) -> str:
    """What a project translating into a language other than the default target sets besides ``target``:
    the first names the adaptation draws, the reviewers' guidelines and the SEAT tests' languages."""
    from biaskit import languages as L

    src = L.source_code()
    adds = {
        "[stages.adapt]": (f'lang = "{lang}"', f"draw the first names of data/languages/{lang}/names.json"),
        "[stages.seat_tests]": (f'langs = ["{src}", "{lang}"]', "the SEAT tests' languages"),
    }
    for table in ("tuple_review", "sentence_review", "pair_review", "cat_review"):
        adds[f"[stages.{table}]"] = (f'guidelines = "{src},{lang}"', "the annotators' guidelines, in these languages")
    out = []
    for line in text.splitlines(keepends=True):
        out.append(line)
        head = line.split("#", 1)[0].strip()
        if head in adds:
            key, comment = adds[head]
            out.append(f"{key:<31} # {comment}\n")
    return "".join(out)
