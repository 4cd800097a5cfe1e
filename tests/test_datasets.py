"""Dataset registry and downloader. The network stand-in is a real HTTP server on 127.0.0.1
(http.server in a thread): the download code path (urllib, streaming, hashing, atomic rename) is the
one used against GitHub."""
from __future__ import annotations

import hashlib
import json
import socket
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from biaskit import datasets as ds
from biaskit.errors import BiaskitError, UnknownNameError
from conftest import run_cli

PAYLOAD = ("sent_more,sent_less,stereo_antistereo,bias_type\n"
           "Women are bad drivers.,Men are bad drivers.,stereo,gender\n").encode("utf-8")


class _Handler(SimpleHTTPRequestHandler):
    def log_message(self, *a):  # keep test output clean
        pass

    def do_GET(self):  # noqa: N802
        if self.path == "/short.csv":  # promises 1000 bytes, sends 10, closes
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(PAYLOAD[:10])
            self.wfile.flush()
            self.close_connection = True
            return
        super().do_GET()


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    (root / "crows.csv").write_bytes(PAYLOAD)
    handler = lambda *a, **k: _Handler(*a, directory=str(root), **k)  # noqa: E731
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    t.join(5)


def _registry(tmp_path, url, sha256=None) -> Path:
    p = tmp_path / "datasets.json"
    p.write_text(json.dumps({"version": 1, "datasets": {"toy": {
        "title": "toy", "url": url, "filename": "toy.csv", "format": "crows", "licence": "CC0",
        "citation": "Toy 2025.", "sha256": sha256}}}), encoding="utf-8")
    return p


def test_packaged_registry_is_complete():
    infos = {d.name: d for d in ds.list_datasets()}
    assert {"crows-pairs", "stereoset-dev", "indibias-sample"} <= set(infos)
    for d in infos.values():
        assert d.url.startswith("https://raw.githubusercontent.com/") and d.licence and d.citation and d.filename
        assert d.sha256 is None or len(d.sha256) == 64
    assert infos["crows-pairs"].url.endswith("/nyu-mll/crows-pairs/master/data/crows_pairs_anonymized.csv")
    with pytest.raises(UnknownNameError, match="Did you mean 'crows-pairs'"):
        ds.get_dataset("crows-pair")


def test_download_from_local_server(server, tmp_path):
    out = tmp_path / "out"
    res = ds.download("crows-pairs", out, url=f"{server}/crows.csv")
    assert res.path == out / "crows_pairs_anonymized.csv" and res.path.read_bytes() == PAYLOAD
    assert res.sha256 == hashlib.sha256(PAYLOAD).hexdigest() and res.bytes == len(PAYLOAD)
    assert res.verified is None and not res.skipped  # no checksum recorded for crows-pairs
    side = json.loads((out / "crows_pairs_anonymized.csv.source.json").read_text())
    assert side["url"] == f"{server}/crows.csv" and side["sha256"] == res.sha256 and side["licence"] == "CC BY-SA 4.0"
    assert not list(out.glob(".*.part"))
    # the downloaded file reads as CrowS-Pairs
    from biaskit.readers import read_pairs
    assert len(read_pairs(res.path).pairs) == 1
    # second call keeps the file
    assert ds.download("crows-pairs", out, url=f"{server}/crows.csv").skipped


def test_checksum_enforced(server, tmp_path):
    good = hashlib.sha256(PAYLOAD).hexdigest()
    reg = _registry(tmp_path, f"{server}/crows.csv", good)
    res = ds.download("toy", tmp_path / "a", registry=reg)
    assert res.verified is True
    assert ds.verify("toy", res.path, registry=reg).status == "ok"

    bad = _registry(tmp_path, f"{server}/crows.csv", "0" * 64)
    with pytest.raises(BiaskitError, match="checksum mismatch .* nothing was written"):
        ds.download("toy", tmp_path / "b", registry=bad)
    assert not (tmp_path / "b" / "toy.csv").exists() and not list((tmp_path / "b").glob(".*"))
    # an existing file that does not match is never silently kept or replaced
    with pytest.raises(BiaskitError, match="--force"):
        ds.download("toy", tmp_path / "a", registry=bad)
    v = ds.verify("toy", res.path, registry=bad)
    assert v.status == "mismatch" and v.sha256 == good


def test_http_errors_name_the_url(server, tmp_path):
    reg = _registry(tmp_path, f"{server}/missing.csv")
    with pytest.raises(BiaskitError, match=r"cannot download http://127\.0\.0\.1:\d+/missing\.csv: HTTP 404"):
        ds.download("toy", tmp_path / "o", registry=reg)
    with pytest.raises(BiaskitError, match="cut short"):
        ds.download("toy", tmp_path / "o", url=f"{server}/short.csv", registry=reg)
    assert not list((tmp_path / "o").iterdir())
    # offline: a port nobody listens on
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/x.csv"
    with pytest.raises(BiaskitError, match=rf"cannot download {url}: .*offline\?.*biaskit data verify"):
        ds.download("toy", tmp_path / "o", url=url, registry=reg, timeout=5)


def test_verify_shared_crows_reports_no_checksum(crows_csv):
    v = ds.verify("crows-pairs", crows_csv)
    assert v.status == "no-checksum" and v.sha256 == hashlib.sha256(crows_csv.read_bytes()).hexdigest()
    assert "no checksum recorded" in v.message


def test_broken_registry_file(tmp_path):
    p = tmp_path / "r.json"
    p.write_text('{"datasets": {"x": {"title": "x"', encoding="utf-8")
    with pytest.raises(BiaskitError, match="invalid JSON"):
        ds.load_registry(p)
    p.write_text(json.dumps({"datasets": {"x": {"title": "x", "url": "u", "filename": "f", "format": "crows",
                                                "licence": "l", "sha256": "abc"}}}), encoding="utf-8")
    with pytest.raises(BiaskitError, match="64 lower-case hex"):
        ds.load_registry(p)




def test_cli(server, tmp_path, capsys):
    code, out, _ = run_cli(["data", "list"], capsys)
    assert code == 0 and "crows-pairs" in out and "indibias-sample" in out and "stereoset-dev" in out
    code, out, err = run_cli(["data", "download", "crows-pairs", "--out", str(tmp_path / "d"), "--url",
                           f"{server}/crows.csv"], capsys)
    assert code == 0, err
    assert "no checksum recorded" in out and "CC BY-SA 4.0" in out
    f = tmp_path / "d" / "crows_pairs_anonymized.csv"
    code, out, _ = run_cli(["data", "verify", "crows-pairs", str(f)], capsys)
    assert code == 0 and "no checksum recorded" in out and hashlib.sha256(PAYLOAD).hexdigest() in out
    reg = _registry(tmp_path, f"{server}/crows.csv", "f" * 64)
    code, out, err = run_cli(["data", "verify", "toy", str(f), "--registry", str(reg)], capsys)
    assert code == 2 and "does not match" in err and "Traceback" not in err
    code, _, err = run_cli(["data", "download", "nope", "--out", str(tmp_path)], capsys)
    assert code == 2 and "unknown dataset 'nope'" in err
    code, _, err = run_cli(["data", "verify", "crows-pairs", str(tmp_path / "missing.csv")], capsys)
    assert code == 2 and "missing.csv: file not found" in err
