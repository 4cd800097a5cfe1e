"""Served models: token log-probabilities from an OpenAI-compatible ``/v1/completions`` endpoint.

The ``clm-api`` scorer (:class:`ServedCLMScorer`) scores sentences with a model that a serving
engine (vLLM, llama-cpp-python's server) runs, through :class:`ServedEngine`, a backend of the
scoring engine (:mod:`.engine`): each request is one text, sent as::

    POST {base_url}/completions  {"model": NAME, "prompt": TEXT, "echo": true, "logprobs": 1,
                                   "max_tokens": 1, "temperature": 0}

With ``echo`` the response's ``choices[0].logprobs`` lists the prompt's own tokens, each with
``log P(token | the tokens before it)``, followed by the one generated token (``max_tokens=0`` is
not portable: llama-cpp-python reads 0 as "no limit"; the generated tokens are dropped, as
lm-evaluation-harness does). The first prompt token has no log-probability (``null``): nothing
precedes it. So a sentence's score is the sum (or mean) over the prompt tokens 2..n of the
*server's* tokenization, which is exactly ``clm``'s convention when the server adds a BOS token
itself (the BOS is the unscored first token; Llama, Gemma, Mistral tokenizers); see
docs/evaluation-scorers.md "Scaling up" for the servers that do not.

Checks (each a one-line :class:`~biaskit.errors.InputError`, exit 2, never a score of zero):

- the server is reachable and lists the model in ``GET {base_url}/models`` (llama-cpp-python
  answers any model name with the one model it serves, so the name is checked here);
- the response carries prompt log-probabilities (TGI and OpenAI's hosted models return none for
  echoed prompts; a server started without all logits kept returns none or an error);
- the echoed tokens include the generated one. llama-cpp-python 0.3.x pairs each prompt token with
  the logits of its *own* position (those of the next token) when the model adds no BOS, and then
  drops the generated token; that response is refused instead of being scored.

The generated token is dropped by count (``usage.completion_tokens``), never by text offsets, which
servers compute from token strings (``<s>``, ``▁The``) that differ from the text.

Requests run concurrently (a thread pool of ``concurrency``), transient failures (connection
errors, timeouts, 429 and 5xx answers) are retried with exponential backoff, and results go through
the shared cache layer (:class:`.engine.CachingEngine`), keyed by the server's model id (and its
``root`` when the server reports one) plus the text: a re-run sends nothing for what was scored.
The API key is read from ``$OPENAI_API_KEY`` (or the variable named by ``api_key_env``); it is sent
as a bearer token and never stored or printed (every server text is passed through
:func:`biaskit.redact.redact`).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from biaskit.errors import BiaskitError, InputError, require
from biaskit.options import say, tell
from biaskit.progress import progress as progress_bar
from biaskit.redact import redact

from .clm import CLMScorer
from .engine import DEFAULT_BATCH_SIZE, Batch, CachingEngine, _collect
from .score_cache import open_cache
from .scorers import _Job

SERVED_CACHE_VERSION = 1  # bump when the meaning of a cached served log-probability changes
DEFAULT_CONCURRENCY = 8
_FIX_SERVER = (
    "serve the model with vLLM (`vllm serve MODEL`) or llama-cpp-python's server (which keeps all "
    "logits by default); TGI and OpenAI's hosted models do not return prompt log-probabilities"
)


@dataclass(frozen=True)
class TextRequest:
    """Log-probabilities of the tokens of ``text`` (2..n), or with ``score_from_char`` only of the
    tokens after ``text[:score_from_char]`` (StereoSet intersentence: the context comes first)."""

    text: str
    score_from_char: int = 0

    def cache_key(self) -> dict:
        return {"text": self.text, "from": self.score_from_char}


class ServedEngine:
    """Prompt log-probabilities from an OpenAI-compatible ``/v1/completions`` endpoint."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        retries: int = 4,
        timeout: float = 120.0,
        backoff: float = 0.5,
        api_key_env: str = "OPENAI_API_KEY",
        progress: bool = True,
        label: str = "",
        chunk: int = 16,
    ):
        httpx = require("httpx", "evaluation", "--scorer clm-api")

        if not base_url:
            raise BiaskitError(f"no server given. Fix: {tell('base_url', 'http://HOST:PORT/v1')}")
        if not model:
            raise BiaskitError(
                f"no served model name given. Fix: {tell('models', 'NAME')} (as the server lists it in /v1/models)"
            )
        if int(concurrency) < 1:
            raise BiaskitError(
                f"concurrency must be >= 1, got {concurrency}. Fix: {tell('concurrency', DEFAULT_CONCURRENCY)}"
            )
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = model
        self.concurrency = int(concurrency)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.progress = bool(progress)
        self.label = label or f"clm-api {model}"
        self.chunk = max(1, int(chunk))
        self.forward_passes = 0  # HTTP completion requests answered (0 on a fully cached re-run)
        self.rows_scored = 0
        self._lock = threading.Lock()
        self._prefixes: dict[str, list[float]] = {}  # context -> its log-probs (shared by a CAT's options)
        key = os.environ.get(api_key_env, "")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(
            timeout=timeout, headers=headers, limits=httpx.Limits(max_connections=self.concurrency)
        )
        self.model_info = self._check_model()

    # ---- identity ---------------------------------------------------------------------------------

    @property
    def cache_id(self) -> dict:
        return {"engine": "served", "v": SERVED_CACHE_VERSION, "model": self.model, "root": self.model_info.get("root")}

    def describe(self) -> dict:
        return {
            "engine": "served",
            "base_url": redact(self.base_url),
            "served_model": self.model,
            "served_root": self.model_info.get("root"),
            "concurrency": self.concurrency,
        }

    def check_length(self, n_tokens: int, text: str) -> None:  # the server checks its context length
        return None

    # ---- HTTP -------------------------------------------------------------------------------------

    def _request(self, method: str, path: str, body: dict | None = None) -> Any:
        import httpx

        url = self.base_url + path
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                r = self._client.request(method, url, json=body)
            except httpx.TransportError as exc:  # connection refused, DNS, timeouts
                last = f"{type(exc).__name__}: {exc}"
                continue
            if r.status_code == 429 or r.status_code >= 500:
                last = f"HTTP {r.status_code}: {r.text[:300]}"
                continue
            if r.status_code >= 400:
                raise InputError(
                    f"the server answered HTTP {r.status_code} for {path}: {redact(r.text[:300])!r}.",
                    path=redact(self.base_url),
                    fix=f"check {say('base_url')}, {say('models')} and $OPENAI_API_KEY",
                )
            try:
                return r.json()
            except ValueError as exc:
                raise InputError(
                    f"the server's answer to {path} is not JSON: {redact(r.text[:200])!r}.",
                    path=redact(self.base_url),
                    fix=f"point {say('base_url')} at the OpenAI-compatible /v1 root",
                ) from exc
        raise InputError(
            f"cannot reach the server ({redact(last)}) after {self.retries + 1} attempts.",
            path=redact(self.base_url),
            fix=f"start the server or correct {say('base_url')} (e.g. http://HOST:PORT/v1)",
        )

    def _check_model(self) -> dict:
        listing = self._request("GET", "/models")
        models = [m for m in (listing or {}).get("data", []) if isinstance(m, dict)]
        ids = [str(m.get("id")) for m in models]
        for m in models:
            if str(m.get("id")) == self.model:
                return {"id": self.model, **({"root": str(m["root"])} if m.get("root") else {})}
        raise InputError(
            f"the server does not serve a model named {self.model!r} (it lists {', '.join(map(repr, ids)) or 'none'}).",
            path=redact(self.base_url),
            fix=tell("models", ids[0] if ids else "NAME"),
        )

    def _text_logprobs(self, text: str) -> list[float]:
        body = {"model": self.model, "prompt": text, "echo": True, "logprobs": 1, "max_tokens": 1, "temperature": 0}
        out = self._request("POST", "/completions", body)
        with self._lock:
            self.forward_passes += 1
        return prompt_logprobs(out, text, where=redact(self.base_url))

    def _logprobs(self, req: TextRequest) -> list[float]:
        """Tokens 2..n of the text; with ``score_from_char``, only the tokens after that prefix: the
        prefix is sent alone too and its token count cut off (tokenizers split at the space that
        starts the continuation, so the prefix's tokens are the same in both)."""
        full = self._text_logprobs(req.text)
        if not req.score_from_char:
            return full
        prefix = req.text[: req.score_from_char]
        with self._lock:
            ctx = self._prefixes.get(prefix)
        if ctx is None:
            ctx = self._text_logprobs(prefix)
            with self._lock:
                self._prefixes[prefix] = ctx
        if len(ctx) >= len(full):
            raise InputError(
                f"the server tokenized {prefix!r} into as many tokens as the whole text; nothing to score after it.",
                path=redact(self.base_url),
                fix="check the context and sentence",
            )
        return full[len(ctx) :]

    # ---- engine API -------------------------------------------------------------------------------

    def loglikelihood(self, requests: Sequence[TextRequest]) -> list[list[float]]:
        return _collect(len(requests), self.iter_loglikelihood(requests))

    def iter_loglikelihood(self, requests: Sequence[TextRequest]) -> Iterator[Batch]:
        """Yield ``(indices, log-probabilities)`` every ``chunk`` finished requests (so each chunk is
        cached before the next); duplicates share one HTTP request. The first error cancels the
        requests not yet sent and is raised (what finished before is already yielded)."""
        same: dict[TextRequest, list[int]] = {}
        for i, r in enumerate(requests):
            same.setdefault(r, []).append(i)
        uniq = list(same)
        if not uniq:
            return
        with (
            progress_bar(len(uniq), self.label, enabled=self.progress, unit="requests") as bar,
            ThreadPoolExecutor(max_workers=self.concurrency) as pool,
        ):
            pending = {pool.submit(self._logprobs, r): r for r in uniq}
            idx: list[int] = []
            res: list[list[float]] = []
            try:
                while pending:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for f in done:
                        r = pending.pop(f)
                        lp = f.result()
                        for i in same[r]:
                            idx.append(i)
                            res.append(lp)
                        self.rows_scored += 1
                        bar.advance(1)
                    if len(idx) >= self.chunk or not pending:
                        yield idx, res
                        idx, res = [], []
            finally:
                for f in pending:
                    f.cancel()


def prompt_logprobs(response: Any, text: str, *, where: str = "<server>") -> list[float]:
    """The log-probabilities of the prompt's tokens 2..n in a ``/v1/completions`` answer with ``echo``
    (see the module docstring). The generated tokens (``usage.completion_tokens``, else 1) are
    dropped by count, not by text offsets: servers compute offsets from token strings that differ
    from the text (``<s>``, ``▁``). Raises :class:`InputError` for an answer without prompt
    log-probabilities or with misaligned ones."""
    fix = _FIX_SERVER
    try:
        choice = response["choices"][0]
    except (KeyError, IndexError, TypeError) as exc:
        raise InputError(
            f"the server's completion has no choices: {redact(str(response)[:200])!r}.",
            path=where,
            fix=f"point {say('base_url')} at an OpenAI-compatible /v1 root",
        ) from exc
    lp = choice.get("logprobs") or {}
    values = list(lp.get("token_logprobs") or [])
    tokens = list(lp.get("tokens") or [])
    offsets = list(lp.get("text_offset") or [])
    usage = response.get("usage") or {}
    n_gen = usage.get("completion_tokens")
    n_gen = int(n_gen) if isinstance(n_gen, int) and n_gen >= 0 else 1
    generated = choice.get("text", "")
    generated = generated[len(text) :] if generated.startswith(text) else generated
    n_prompt_usage = usage.get("prompt_tokens")
    if (
        generated
        and n_gen
        and len(values) == n_prompt_usage
        and len(offsets) == len(values)
        and offsets
        and offsets[-1] < len(text)
        and len(text) > 0
    ):
        # llama-cpp-python's shape: as many entries as prompt tokens, and the last one inside the
        # prompt (its offsets are true character offsets) -> the generated token is missing
        raise InputError(
            "the server's prompt log-probabilities are misaligned (the generated token is missing "
            "from the echo: llama-cpp-python does this for a model that adds no BOS token).",
            path=where,
            fix="restart llama_cpp.server with --kv_overrides tokenizer.ggml.add_bos_token=bool:true",
        )
    prompt = values[: len(values) - n_gen] if n_gen else values
    short = isinstance(n_prompt_usage, int) and len(prompt) < n_prompt_usage - 1  # a BOS may be left out
    if not prompt or short or (len(prompt) > 1 and all(v is None for v in prompt[1:])):
        raise InputError(
            "the server returned no log-probabilities for the prompt's tokens "
            "(echo=true with logprobs is unsupported or switched off there).",
            path=where,
            fix=fix,
        )
    out: list[float] = []
    for k, v in enumerate(prompt):
        if v is None:
            if k == 0:
                continue  # the first token: nothing precedes it
            name = redact(str(tokens[k])) if k < len(tokens) else "?"
            raise InputError(
                f"the server returned no log-probability for prompt token {k + 1} ({name!r}).", path=where, fix=fix
            )
        out.append(float(v))
    return out


class ServedCLMScorer(CLMScorer):
    """``clm-api``: causal sentence log-probability (sum, or mean per scored token) from a served model."""

    name = "clm-api"
    kind = "clm"
    methods = ("sum", "mean")
    units = ("token",)
    served = True  # load_scorer hands it the model name instead of loading a model
    lm: Any  # None here: no local LoadedLM (the server tokenizes and scores)

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        unit: str = "token",
        method: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        cache: Any = True,
        progress: bool = True,
        concurrency: int = DEFAULT_CONCURRENCY,
        retries: int = 4,
        timeout: float = 120.0,
        api_key_env: str = "OPENAI_API_KEY",
        **_: Any,
    ):
        unit, method = self.check_options(unit, method, batch_size)
        if not isinstance(model, str):
            raise BiaskitError(
                f"{say('scorer', 'clm-api')} takes the served model's name. Fix: {tell('models', 'NAME')} "
                f"(as GET /v1/models lists it) with {say('base_url')}"
            )
        self.lm = None
        self.unit, self.method = unit, method
        self.normalise = "none"
        self.lowercase = False
        self.bos_id = None
        eng = ServedEngine(
            base_url or "",
            model,
            concurrency=concurrency,
            retries=retries,
            timeout=timeout,
            api_key_env=api_key_env,
            progress=progress,
            label=f"clm-api {model}",
        )
        self.served_engine = eng
        self.engine = CachingEngine(eng, cache) if open_cache(cache) is not None else eng
        self.batch_size = int(batch_size)

    def describe(self) -> dict:
        return {
            "model": self.served_engine.model,
            "fingerprint": None,
            "scorer": self.name,
            "unit": self.unit,
            "method": self.method,
            "normalise": self.normalise,
            "normalisation": self._normalisation(),
            "lowercase": False,
            "batch_size": None,
            "device": "server",
            "dtype": None,
            "engine": self.engine.describe(),
        }

    def encode(self, text: str) -> tuple[int, ...]:
        raise BiaskitError("clm-api does not tokenize: the server does")

    def _plan_text(self, text: str) -> _Job:
        return _Job(text=text, ids=(), groups=())

    def _requests(self, job: _Job) -> list[TextRequest]:  # type: ignore[override]
        return [TextRequest(job.text)]


@dataclass
class ServedLM:
    """A served causal LM in the place of a :class:`~.models.LoadedLM` for StereoSet
    (:func:`.stereoset.score_cats` plans text requests for it; the server tokenizes)."""

    engine: Any
    name: str
    kind: str = "clm"
    served: bool = True
    tokenizer: Any = None  # the server tokenizes
    fingerprint: Any = None
    device: str = "server"
    dtype: Any = None
    meta: dict = field(default_factory=dict)

    @staticmethod
    def text_request(text: str, score_from_char: int = 0) -> TextRequest:
        return TextRequest(text, score_from_char)

    def describe(self) -> dict:
        return {"model": self.name, "kind": self.kind, "device": self.device, "engine": self.engine.describe()}


def load_served_lm(
    model: str,
    *,
    base_url: str | None = None,
    cache: Any = True,
    progress: bool = True,
    concurrency: int = DEFAULT_CONCURRENCY,
    **kw: Any,
) -> ServedLM:
    """A :class:`ServedLM` on ``base_url`` (checked: reachable, serves ``model``), cached unless
    ``cache`` is False/None."""
    eng = ServedEngine(
        base_url or "", model, concurrency=concurrency, progress=progress, label=f"stereoset clm-api {model}", **kw
    )
    return ServedLM(engine=CachingEngine(eng, cache) if open_cache(cache) is not None else eng, name=model)
