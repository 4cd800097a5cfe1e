"""The ``openai`` backend: any OpenAI-compatible chat-completions endpoint through the official
``openai`` client (OpenAI itself, llama.cpp's server, vLLM, Ollama, LM Studio, ...).

Only :meth:`OpenAILLM._send` is here: it maps the client's outcomes onto the base class's
failure kinds (see :mod:`.base`): connection refused / unknown host -> ``connect``; timeouts;
HTTP 408/409/425/429/5xx -> retried; 401/403 (key rejected) and 404 (no such model or path) stop
the run; a server that rejects ``response_format`` -> the next format; a 200 whose body is not a
chat completion (an HTML page: ``--base-url`` pointing at a website) fails that job.
"""

from __future__ import annotations

import os
import re
import threading
from typing import Any

from biaskit.redact import redact

from .base import RETRYABLE_STATUS, BaseLLM, Fatal, FormatRejected, Transient, retry_after_seconds
from .pricing import is_local_endpoint
from .protocol import EndpointError, LLMError, Usage

_PLACEHOLDER_HOSTS = {
    "url",
    "host",
    "hostname",
    "server",
    "endpoint",
    "your-server",
    "your-endpoint",
    "example.com",
    "example.org",
    "example.net",
    "api.example.com",
    "xxx",
    "port",
}


def check_base_url(base_url: str | None) -> None:
    """Refuse at once a base URL that cannot be an endpoint (no http(s) scheme, no host, a
    placeholder such as ``URL``, ``http://HOST:PORT/v1`` or ``<server>``), instead of retrying it
    for half a minute and leaving an empty output behind."""
    if not base_url:
        return
    from urllib.parse import urlsplit

    from biaskit.options import say

    u = urlsplit(base_url.strip())
    host = (u.hostname or "").lower()
    why = None
    if u.scheme not in ("http", "https"):
        why = "it does not start with http:// or https://"
    elif not host:
        why = "it names no host"
    elif (
        host in _PLACEHOLDER_HOSTS
        or re.search(r"[<>{}]|\.\.\.|\$", base_url)
        or "HOST" in base_url
        or "PORT" in base_url
    ):
        why = "it is a placeholder, not a server's address"
    else:
        try:
            _ = u.port  # read for its check only: urllib raises ValueError on a non-numeric port
        except ValueError:
            why = "its port is not a number"
    if why:
        raise LLMError(
            f"base URL '{base_url}' cannot be an endpoint: {why}. Fix: set {say('base_url', 'URL')} to "
            "your OpenAI-compatible server's API root, e.g. http://127.0.0.1:8000/v1 (a local llama.cpp "
            f"server), or {say('llm', 'dummy')} to try it offline."
        )


def _is_connect_error(exc: BaseException) -> bool:
    """``httpx.ConnectError`` (or the copy the openai client vendors) somewhere in the cause chain."""
    seen = 0
    cur: BaseException | None = exc
    while cur is not None and seen < 5:
        if any(c.__name__ == "ConnectError" for c in type(cur).__mro__):
            return True
        cur = cur.__cause__ or cur.__context__
        seen += 1
    return False


def _reason(exc: BaseException) -> str:
    cause = exc.__cause__ or exc
    text = str(cause) or type(cause).__name__
    m = re.search(r"\[Errno -?\d+\]\s*(.+?)['\")]*$", text)
    return (m.group(1) if m else text).strip().lower()


class OpenAILLM(BaseLLM):
    """Chat completions through the official ``openai`` client.

    ``base_url`` defaults to ``$OPENAI_BASE_URL``, else the server ``biaskit llm serve`` runs for
    ``model`` (:func:`~biaskit.curation.llm_server.served_base_url`), else OpenAI's API; ``api_key`` to
    ``$OPENAI_API_KEY`` (a placeholder is sent to endpoints given by URL, which may not need one).
    """

    name = "openai"

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None, **kw: Any):
        from ..llm_server import default_base_url

        base_url = default_base_url(base_url, model) or None  # given, $OPENAI_BASE_URL, or `biaskit llm serve`'s
        api_key = api_key or os.environ.get("OPENAI_API_KEY")
        if not api_key and not base_url:
            from biaskit.options import say

            raise LLMError(
                f"no endpoint to send requests to. Fix: set {say('base_url', 'URL')}, the API root of an "
                "OpenAI-compatible server (e.g. http://127.0.0.1:8000/v1 for a local llama.cpp server; or "
                "the environment variable OPENAI_BASE_URL), or start a local one with `biaskit llm serve` "
                f"(then {say('model', 'gemma3-270m')} finds it); for OpenAI's API set OPENAI_API_KEY instead; "
                f"or {say('llm', 'dummy')} to try it offline."
            )
        check_base_url(base_url)
        super().__init__(model, base_url=base_url, **kw)
        self._api_key = api_key or ("sk-local-placeholder" if is_local_endpoint(base_url) else "sk-placeholder")
        self._client = None
        self._client_lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        return (self.base_url or "https://api.openai.com/v1").rstrip("/")

    def _server_slots_url(self) -> str | None:
        return self.base_url  # a server given by URL (OpenAI's API says nothing about slots)

    def client(self):
        with self._client_lock:
            if self._client is None:
                from biaskit.errors import require

                openai = require("openai", "curation", "LLM generation")
                self._client = openai.OpenAI(
                    api_key=self._api_key, base_url=self.base_url, max_retries=0, timeout=self.timeout
                )
            return self._client

    def _send(self, messages, params, response_format):
        import openai

        kwargs = dict(params)
        extra_body = {}
        if response_format is not None:
            if response_format.get("type") == "json_object" and "schema" in response_format:
                extra_body["response_format"] = response_format  # llama.cpp's extension
            else:
                kwargs["response_format"] = response_format
        try:
            resp = self.client().chat.completions.create(
                model=self.model,
                messages=list(messages),
                extra_body=extra_body or None,
                timeout=self.current_timeout,  # the one set, or longer after a back-off (.fit)
                **kwargs,
            )
        except openai.APIStatusError as exc:
            status = exc.status_code
            text = redact(str(exc))
            if (
                response_format is not None
                and status in (400, 422, 500)
                and re.search(r"response_format|json_schema|json_object|schema", text, re.I)
            ):
                raise FormatRejected(f"HTTP {status}: {text[:200]}") from None
            if status in (401, 403):
                raise EndpointError(
                    f"{self.endpoint} refused the API key (HTTP {status}: {text[:200]}). Fix: set "
                    "OPENAI_API_KEY to a valid key for this endpoint."
                ) from None
            if status == 404:
                from biaskit.options import say

                raise EndpointError(
                    f"{self.endpoint} has no model '{self.model}' or no chat-completions path "
                    f"(HTTP 404: {text[:200]}). Fix: check {say('model')} and that {say('base_url')} "
                    "ends with the API root (e.g. .../v1)."
                ) from None
            if status in RETRYABLE_STATUS:
                raise Transient(
                    f"HTTP {status}: {text[:200]}", retry_after=retry_after_seconds(exc.response.headers), status=status
                ) from None
            raise Fatal(f"HTTP {status}: {text[:300]}") from None
        except openai.APITimeoutError:
            raise Transient("timed out", kind="timeout") from None
        except openai.APIConnectionError as exc:
            if _is_connect_error(exc):
                raise Transient(_reason(exc), kind="connect") from None
            raise Transient(f"connection error ({_reason(exc)})", kind="network") from None
        if not hasattr(resp, "choices"):
            body = redact(str(resp))[:120].replace("\n", " ")
            from biaskit.options import say

            raise Fatal(
                f"the endpoint answered HTTP 200 with something that is not a chat completion "
                f"({body!r}). Is {say('base_url')} the API root, e.g. http://host:8000/v1?"
            )
        choice = resp.choices[0] if resp.choices else None
        text = (choice.message.content if choice and choice.message else None) or ""
        u = resp.usage
        usage = Usage(getattr(u, "prompt_tokens", 0) or 0, getattr(u, "completion_tokens", 0) or 0) if u else Usage()
        return text, usage, getattr(choice, "finish_reason", None)
