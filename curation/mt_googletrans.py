"""The ``googletrans`` engine: Google Translate through the ``googletrans`` package (4.x, async).

googletrans 4.x is an asyncio client over httpx: ``async with Translator() as t: await
t.translate([...], src='en', dest='hi')``. It talks to ``translate.googleapis.com`` (the "gtx"
client, no token) by default. This engine

- batches: a list of texts goes out with up to ``concurrency`` requests in flight (googletrans
  sends one GET per text; Google has no documented multi-text call for this endpoint);
- retries each text with exponential backoff on HTTP errors (429, 5xx) and timeouts;
- fails at once with a clear message when the host cannot be reached (offline: httpx raises
  ``ConnectError`` within a fraction of a second);
- turns on googletrans' ``raise_exception``: by default googletrans silently returns the *input
  text* as its "translation" on any non-200 answer, which would put English into the Hindi data.

``service_url`` (``host[:port]``; env ``BIASKIT_GOOGLETRANS_HOST``) and ``verify`` (a CA bundle
path; env ``BIASKIT_GOOGLETRANS_CA``) redirect the same client to another host speaking Google's
protocol (a mirror behind a corporate proxy, or the tests' local HTTPS stand-in that runs the real
request/response code without the network); ordinary users never set them.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Sequence
from typing import Any

from biaskit.options import say

from .mt_base import MTEngine, MTError

DEFAULT_HOST = "translate.googleapis.com"


class GoogleTransEngine(MTEngine):
    name = "googletrans"
    joint_pairs = False

    def __init__(
        self,
        service_url: str | None = None,
        *,
        verify: Any = True,
        timeout: float = 10.0,
        retries: int = 3,
        backoff: float = 1.0,
        concurrency: int = 4,
    ):
        from biaskit.errors import require

        require("googletrans", "curation", "the googletrans translation engine")
        self.service_url = service_url or os.environ.get("BIASKIT_GOOGLETRANS_HOST") or DEFAULT_HOST
        if verify is True and os.environ.get("BIASKIT_GOOGLETRANS_CA"):
            verify = os.environ["BIASKIT_GOOGLETRANS_CA"]
        self.verify = verify
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff = float(backoff)
        self.concurrency = max(1, int(concurrency))
        # The cache key says "google", not the host: a stand-in host is a test of the client code.
        self.model = "google-translate"
        self.requests_made = 0

    def cache_params(self) -> dict[str, Any]:
        return {}

    def provenance(self) -> dict[str, Any]:
        import googletrans

        return {
            "engine": self.name,
            "model": self.model,
            "host": self.service_url,
            "googletrans": getattr(googletrans, "__version__", "?"),
        }

    # -- the async core -------------------------------------------------------------------------
    def _translator(self):
        import httpx
        from googletrans import Translator
        from googletrans.constants import DEFAULT_USER_AGENT

        t = Translator(
            raise_exception=True, timeout=httpx.Timeout(self.timeout), list_operation_max_concurrency=self.concurrency
        )
        if self.service_url != DEFAULT_HOST:
            # keep the "gtx" client type (no token round trip) and only change the host
            t.service_urls = [self.service_url]
        if self.verify is not True:
            import ssl

            verify = ssl.create_default_context(cafile=self.verify) if isinstance(self.verify, str) else self.verify
            old = t.client
            t.client = httpx.AsyncClient(
                http2=False,
                verify=verify,
                timeout=httpx.Timeout(self.timeout),
                headers={"User-Agent": DEFAULT_USER_AGENT},
            )
            t.token_acquirer.client = t.client
            t._old_client = old
        return t

    async def _run(self, texts: list[str], src: str, tgt: str) -> list[str]:
        t = self._translator()
        sem = asyncio.Semaphore(self.concurrency)
        try:
            async with t:
                return list(await asyncio.gather(*(self._one(t, x, src, tgt, sem) for x in texts)))
        finally:
            old = getattr(t, "_old_client", None)
            if old is not None:
                await old.aclose()

    async def _one(self, t, text: str, src: str, tgt: str, sem: asyncio.Semaphore) -> str:
        """One text, retried on its own (a 429 on one text does not resend the others)."""
        import httpx

        attempt = 0
        async with sem:
            while True:
                try:
                    self.requests_made += 1
                    res = await t.translate(text, src=src, dest=tgt)
                    return res.text
                except httpx.ConnectError as exc:
                    raise MTError(
                        f"googletrans: cannot reach {self.service_url} ({exc}). You appear to be offline or the "
                        "host is blocked. Fix: connect to the internet, or use another engine "
                        f"({say('engines', 'hf:PATH')} or {say('engines', 'llm:MODEL')}); finished translations are "
                        "cached and reused."
                    ) from None
                except ValueError as exc:  # googletrans' "invalid destination language"
                    raise MTError(
                        f"googletrans: {exc} ('{src}' -> '{tgt}'). Fix: use a language code from "
                        "googletrans.LANGUAGES, e.g. hi."
                    ) from None
                except Exception as exc:  # HTTP 429/5xx (googletrans raises a bare Exception), timeouts
                    attempt += 1
                    if attempt > self.retries:
                        raise MTError(
                            f"googletrans: request failed {attempt} times, last error: {exc}. Fix: retry "
                            f"later (Google rate-limits bursts; lower {say('concurrency')}); finished "
                            "translations are cached and reused."
                        ) from None
                    await asyncio.sleep(self.backoff * 2 ** (attempt - 1))

    def translate(self, texts: Sequence[str], src: str, tgt: str) -> list[str]:
        texts = list(texts)
        if not texts:
            return []
        idx = [i for i, s in enumerate(texts) if s.strip()]
        started = time.monotonic()
        try:
            got = asyncio.run(self._run([texts[i] for i in idx], src, tgt))
        except RuntimeError as exc:
            if "running event loop" not in str(exc):
                raise
            # called from inside an event loop (a notebook): run in a worker thread
            import concurrent.futures

            with concurrent.futures.ThreadPoolExecutor(1) as ex:
                got = ex.submit(asyncio.run, self._run([texts[i] for i in idx], src, tgt)).result()
        self.last_seconds = time.monotonic() - started
        out = [""] * len(texts)
        for i, g in zip(idx, got, strict=False):
            out[i] = g
        return out
