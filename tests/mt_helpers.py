"""Helpers for the MT tests (test_mt_*.py): a tiny random NLLB-style seq2seq model and a local
HTTPS stand-in of Google Translate's endpoint.

Neither is a mock of the code under test: the tiny model is a real ``M2M100ForConditionalGeneration``
with a real ``NllbTokenizer`` (BPE trained here with ``tokenizers``) loaded through
``AutoModelForSeq2SeqLM`` from a folder; the stand-in is an ``http.server`` over TLS that answers
``GET /translate_a/single`` in the JSON layout translate.googleapis.com uses, so googletrans'
own request building (``build_params``), httpx transport and response parsing all run.
"""

from __future__ import annotations

import json
import shutil
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

CORPUS = [
    "The man is a doctor.",
    "The woman is a doctor.",
    "He is a nurse.",
    "She is a nurse.",
    "Priya went to Delhi.",
    "Rahul went to Mumbai.",
    "The Brahmin family lived in a mansion.",
    "वह एक डॉक्टर है।",
    "एक पुरुष डॉक्टर है।",
    "एक महिला डॉक्टर है।",
    "प्रिया दिल्ली गई।",
    "ब्राह्मण परिवार एक हवेली में रहता था।",
]


def build_tiny_nllb(dest: Path, seed: int = 0) -> Path:
    """Save a tiny random NLLB-style model (M2M-100 architecture + NllbTokenizer) to ``dest``."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import M2M100Config, M2M100ForConditionalGeneration, NllbTokenizer

    tk = Tokenizer(models.BPE(unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tk.train_from_iterator(
        CORPUS * 3,
        trainers.BpeTrainer(vocab_size=400, special_tokens=["<s>", "<pad>", "</s>", "<unk>"], show_progress=False),
    )
    m = json.loads(tk.to_str())["model"]
    tok = NllbTokenizer(
        vocab=m["vocab"],
        merges=[tuple(x) for x in m["merges"]],
        additional_special_tokens=["eng_Latn", "hin_Deva", "ben_Beng"],
        src_lang="eng_Latn",
    )
    cfg = M2M100Config(
        vocab_size=len(tok),
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=128,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.eos_token_id,
    )
    torch.manual_seed(seed)
    model = M2M100ForConditionalGeneration(cfg)
    dest.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(dest)
    tok.save_pretrained(dest)
    return dest


# ------------------------------------------------------------------------------ Google stand-in
class GoogleStandIn:
    """HTTPS server on 127.0.0.1 answering googletrans' gtx requests.

    ``table`` maps English text -> translation; unknown text is answered with ``"[hi] " + text``.
    ``fail_first`` answers the first N requests with HTTP 429 (rate limit) to exercise retries.
    Every request's query parameters are recorded in ``requests``.
    """

    def __init__(self, tmp: Path, table: dict[str, str] | None = None, fail_first: int = 0):
        if shutil.which("openssl") is None:
            import pytest

            pytest.skip("openssl is needed to make the stand-in's TLS certificate")
        self.table = dict(table or {})
        self.fail_first = fail_first
        self.requests: list[dict] = []
        self.cert = tmp / "standin.pem"
        self.key = tmp / "standin.key"
        subprocess.run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "1",
                "-keyout",
                str(self.key),
                "-out",
                str(self.cert),
                "-subj",
                "/CN=127.0.0.1",
                "-addext",
                "subjectAltName=IP:127.0.0.1",
            ],
            check=True,
            capture_output=True,
        )
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def do_GET(self):
                u = urlparse(self.path)
                q = parse_qs(u.query)
                outer.requests.append({"path": u.path, **{k: v if len(v) > 1 else v[0] for k, v in q.items()}})
                if outer.fail_first > 0:
                    outer.fail_first -= 1
                    self.send_response(429)
                    self.end_headers()
                    self.wfile.write(b"Too Many Requests")
                    return
                if u.path != "/translate_a/single" or "q" not in q:
                    self.send_response(404)
                    self.end_headers()
                    return
                text, sl, tl = q["q"][0], q.get("sl", ["auto"])[0], q.get("tl", ["en"])[0]
                out = outer.table.get(text, f"[{tl}] {text}")
                # translate.googleapis.com's layout: [[[translated, original, null, null, 10], ...,
                #   [null, null, translit]], null, detected_src, ..., [[src], null, [conf], [src]]]
                body = [
                    [[out, text, None, None, 10], [None, None, "translit"]],
                    None,
                    sl if sl != "auto" else "en",
                    None,
                    None,
                    None,
                    1.0,
                    [],
                    [[sl], None, [1.0], [sl]],
                ]
                data = json.dumps(body, ensure_ascii=False).encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "application/json; charset=UTF-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.cert, self.key)
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.host = f"127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# ------------------------------------------------------------------------------ llama.cpp server


def _en_pairs():
    from biaskit.schema import SentencePair

    return [
        SentencePair(
            sent_more="The man is a doctor.", sent_less="The woman is a doctor.", direction="stereo", bias_type="gender"
        ),
        SentencePair(
            sent_more="He is a nurse.", sent_less="She is a nurse.", direction="antistereo", bias_type="gender"
        ),
        SentencePair(
            sent_more="Priya went to Delhi.", sent_less="Rahul went to Delhi.", direction="stereo", bias_type="gender"
        ),
    ]


EN_PAIRS = _en_pairs()  # small English pairs shared by the MT tests
