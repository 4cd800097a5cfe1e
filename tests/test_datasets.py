"""Dataset registry and downloader. The network stand-in is a real HTTP server on 127.0.0.1
(http.server in a thread): the download code path (urllib, streaming, hashing, atomic rename) is the
one used against GitHub."""

from __future__ import annotations

import functools
import hashlib
import json
import socket
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import run_cli

from biaskit import datasets as ds
from biaskit.errors import BiaskitError, UnknownNameError

PAYLOAD = (
    b"sent_more,sent_less,stereo_antistereo,bias_type\nWomen are bad drivers.,Men are bad drivers.,stereo,gender\n"
)


class _Handler(SimpleHTTPRequestHandler):
    def log_message(self, *a):  # keep test output clean
        pass

    def do_GET(self):
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
    handler = functools.partial(_Handler, directory=str(root))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    t.join(5)


def _registry(tmp_path, url, sha256=None) -> Path:
    p = tmp_path / "datasets.json"
    p.write_text(
        json.dumps(
            {
                "version": 1,
                "datasets": {
                    "toy": {
                        "title": "toy",
                        "url": url,
                        "filename": "toy.csv",
                        "format": "crows",
                        "licence": "CC0",
                        "citation": "Toy 2025.",
                        "sha256": sha256,
                    }
                },
            }
        ),
        encoding="utf-8",
    )
    return p


def test_packaged_registry_is_complete():
    infos = {d.name: d for d in ds.list_datasets()}
    assert {"crows-pairs", "stereoset-dev", "indibias-sample", "sent-bias-seat"} <= set(infos)
    for d in infos.values():
        assert d.url.startswith("https://raw.githubusercontent.com/") and d.licence and d.citation and d.filename
        assert d.sha256 is None or len(d.sha256) == 64
    # checksums compared byte for byte with the upstream files (values from ../shared/data/README.md),
    # the URLs pinned to those upstream commits so that the checksum stays right
    assert infos["crows-pairs"].url == (
        "https://raw.githubusercontent.com/nyu-mll/crows-pairs/"
        "8aaac11c485473159ec9328a65253a5be9a479dc/data/crows_pairs_anonymized.csv"
    )
    assert infos["crows-pairs"].sha256 == "dfb36986ce0502abbaf7055b9176da3d08d48e07df1251991b5dfbcbceab9d0c"
    assert infos["indibias-sample"].url == (
        "https://raw.githubusercontent.com/sahoonihar/IndiBias/"
        "42940cb03f90f7ae1494715e38780a9a51de2bd3/IndiBias_v1_sample.csv"
    )
    assert infos["indibias-sample"].sha256 == "5e1b45e5bd9ebb9d217f3ecfc5024390cee30395945a5376015e86e1523f034e"
    # the original StereoSet dev.json could not be obtained: no checksum, and the note says so
    assert infos["stereoset-dev"].sha256 is None and "could not obtain" in infos["stereoset-dev"].notes
    seat = infos["sent-bias-seat"]
    assert seat.url.endswith("/") and "weat6.jsonl" in seat.files and "sent-weat6.jsonl" in seat.files
    with pytest.raises(UnknownNameError, match="Did you mean 'crows-pairs'"):
        ds.get_dataset("crows-pair")


def test_download_from_local_server(server, tmp_path):
    out = tmp_path / "out"
    reg = _registry(tmp_path, f"{server}/crows.csv")  # no checksum recorded
    res = ds.download("toy", ds.DownloadOptions.from_kwargs(out_dir=out, registry=reg))
    assert res.path == out / "toy.csv" and res.path.read_bytes() == PAYLOAD
    assert res.sha256 == hashlib.sha256(PAYLOAD).hexdigest() and res.bytes == len(PAYLOAD)
    assert res.verified is None and not res.skipped and res.mirror is None
    side = json.loads((out / "toy.csv.source.json").read_text())
    assert side["url"] == f"{server}/crows.csv" and side["sha256"] == res.sha256 and side["licence"] == "CC0"
    assert not list(out.glob(".*.part"))
    # the downloaded file reads as CrowS-Pairs
    from biaskit.readers import read_pairs

    assert len(read_pairs(res.path, format="crows").pairs) == 1
    # second call keeps the file
    assert ds.download("toy", ds.DownloadOptions.from_kwargs(out_dir=out, registry=reg)).skipped
    # --url (an HTTP mirror) still enforces the recorded checksum of the real release
    with pytest.raises(BiaskitError, match="checksum mismatch for 'crows-pairs'"):
        ds.download("crows-pairs", ds.DownloadOptions.from_kwargs(out_dir=tmp_path / "real", url=f"{server}/crows.csv"))
    assert not (tmp_path / "real" / "crows_pairs_anonymized.csv").exists()


def test_checksum_enforced(server, tmp_path):
    good = hashlib.sha256(PAYLOAD).hexdigest()
    reg = _registry(tmp_path, f"{server}/crows.csv", good)
    res = ds.download("toy", ds.DownloadOptions.from_kwargs(out_dir=tmp_path / "a", registry=reg))
    assert res.verified is True
    assert ds.verify("toy", res.path, registry=reg).status == "ok"

    bad = _registry(tmp_path, f"{server}/crows.csv", "0" * 64)
    with pytest.raises(BiaskitError, match="checksum mismatch .* nothing was written"):
        ds.download("toy", ds.DownloadOptions.from_kwargs(out_dir=tmp_path / "b", registry=bad))
    assert not (tmp_path / "b" / "toy.csv").exists() and not list((tmp_path / "b").glob(".*"))
    # an existing file that does not match is never silently kept or replaced
    with pytest.raises(BiaskitError, match="--force"):
        ds.download("toy", ds.DownloadOptions.from_kwargs(out_dir=tmp_path / "a", registry=bad))
    v = ds.verify("toy", res.path, registry=bad)
    assert v.status == "mismatch" and v.sha256 == good


def test_http_errors_name_the_url(server, tmp_path):
    reg = _registry(tmp_path, f"{server}/missing.csv")
    with pytest.raises(BiaskitError, match=r"cannot download http://127\.0\.0\.1:\d+/missing\.csv: HTTP 404"):
        ds.download("toy", ds.DownloadOptions.from_kwargs(out_dir=tmp_path / "o", registry=reg))
    with pytest.raises(BiaskitError, match="cut short"):
        ds.download(
            "toy", ds.DownloadOptions.from_kwargs(out_dir=tmp_path / "o", url=f"{server}/short.csv", registry=reg)
        )
    assert not (tmp_path / "o").exists()  # a failed download leaves nothing behind, not even its folder
    # offline: a port nobody listens on
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/x.csv"
    with pytest.raises(BiaskitError, match=rf"cannot download {url}: .*offline\?.*biaskit data verify"):
        ds.download("toy", ds.DownloadOptions.from_kwargs(out_dir=tmp_path / "o", url=url, registry=reg, timeout=5))


def test_verify_real_crows_against_the_recorded_checksum(crows_csv):
    v = ds.verify("crows-pairs", crows_csv)
    assert v.status == "ok" and v.sha256 == hashlib.sha256(crows_csv.read_bytes()).hexdigest()
    assert "matches the recorded checksum" in v.message


def test_mirror_copy_is_verified_like_a_download(tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "sub").mkdir(parents=True)
    (mirror / "sub" / "toy.csv").write_bytes(PAYLOAD)
    good = hashlib.sha256(PAYLOAD).hexdigest()
    dead = "http://127.0.0.1:9/never-used.csv"  # the mirror holds the file: the network is not touched
    res = ds.download(
        "toy",
        ds.DownloadOptions.from_kwargs(out_dir=tmp_path / "a", mirror=mirror, registry=_registry(tmp_path, dead, good)),
    )
    assert res.mirror == mirror / "sub" / "toy.csv" and res.verified is True and res.path.read_bytes() == PAYLOAD
    side = json.loads((tmp_path / "a" / "toy.csv.source.json").read_text())
    assert side["mirror"] == str(mirror / "sub" / "toy.csv") and side["url"] == dead
    # a mirror holding another version is refused, exactly like a corrupt download
    (mirror / "sub" / "toy.csv").write_bytes(PAYLOAD + b"extra,row,stereo,gender\n")
    with pytest.raises(BiaskitError, match="checksum mismatch .* mirror file .* nothing was written"):
        ds.download(
            "toy",
            ds.DownloadOptions.from_kwargs(
                out_dir=tmp_path / "b", mirror=mirror, registry=_registry(tmp_path, dead, good)
            ),
        )
    assert not (tmp_path / "b").exists()  # nothing written, not even the folder
    # a mirror that lacks the file falls back to the URL (here: nobody listens, so the offline error)
    with pytest.raises(BiaskitError, match="offline"):
        ds.download(
            "toy",
            ds.DownloadOptions.from_kwargs(
                out_dir=tmp_path / "c", mirror=tmp_path / "empty", registry=_registry(tmp_path, dead, good), timeout=5
            ),
        )


def test_multi_file_release_from_server_and_mirror(server, tmp_path):
    root = tmp_path / "www"
    (root / "t1.jsonl").write_text('{"a": 1}\n')
    (root / "t2.jsonl").write_text('{"b": 2}\n')
    # the manifest digest, by hand: sha256 over "<sha256>  <name>\n" lines sorted by name (sha256sum's format)
    lines = "".join(f"{hashlib.sha256((root / f).read_bytes()).hexdigest()}  {f}\n" for f in ("t1.jsonl", "t2.jsonl"))
    manifest = hashlib.sha256(lines.encode()).hexdigest()
    reg = tmp_path / "multi.json"
    reg.write_text(
        json.dumps(
            {
                "datasets": {
                    "tests": {
                        "title": "t",
                        "url": f"{server}/",
                        "filename": "tests",
                        "files": ["t2.jsonl", "t1.jsonl"],
                        "format": "seat",
                        "licence": "CC0",
                        "sha256": manifest,
                    }
                }
            }
        )
    )
    res = ds.download("tests", ds.DownloadOptions.from_kwargs(out_dir=tmp_path / "out", registry=reg))
    assert res.path == tmp_path / "out" / "tests" and res.sha256 == manifest and res.verified is True
    assert sorted(p.name for p in res.path.iterdir()) == ["t1.jsonl", "t2.jsonl"]
    assert ds.verify("tests", res.path, registry=reg).status == "ok"
    assert ds.download("tests", ds.DownloadOptions.from_kwargs(out_dir=tmp_path / "out", registry=reg)).skipped
    # from a mirror folder holding the files under another name (as ../shared/data/seat)
    res2 = ds.download(
        "tests", ds.DownloadOptions.from_kwargs(out_dir=tmp_path / "out2", mirror=tmp_path, registry=reg)
    )
    assert res2.mirror == root and res2.sha256 == manifest
    # a missing file upstream: nothing is published
    bad = tmp_path / "bad.json"
    bad.write_text(reg.read_text().replace('"t1.jsonl"]', '"t1.jsonl", "t3.jsonl"]'))
    with pytest.raises(BiaskitError, match="HTTP 404"):
        ds.download("tests", ds.DownloadOptions.from_kwargs(out_dir=tmp_path / "out3", registry=bad))
    assert not (tmp_path / "out3" / "tests").exists()


def test_broken_registry_file(tmp_path):
    p = tmp_path / "r.json"
    p.write_text('{"datasets": {"x": {"title": "x"', encoding="utf-8")
    with pytest.raises(BiaskitError, match="invalid JSON"):
        ds.load_registry(p)
    p.write_text(
        json.dumps(
            {
                "datasets": {
                    "x": {"title": "x", "url": "u", "filename": "f", "format": "crows", "licence": "l", "sha256": "abc"}
                }
            }
        ),
        encoding="utf-8",
    )
    with pytest.raises(BiaskitError, match="64 lower-case hex"):
        ds.load_registry(p)


def test_cli(server, tmp_path, capsys):
    code, out, _ = run_cli(["data", "list"], capsys)
    assert code == 0 and "crows-pairs" in out and "indibias-sample" in out and "stereoset-dev" in out
    toy = _registry(tmp_path, f"{server}/crows.csv")
    code, out, err = run_cli(["data", "download", "toy", "--out", str(tmp_path / "d"), "--registry", str(toy)], capsys)
    assert code == 0, err
    assert "no checksum recorded" in out and "CC0" in out
    f = tmp_path / "d" / "toy.csv"
    code, out, _ = run_cli(["data", "verify", "toy", str(f), "--registry", str(toy)], capsys)
    assert code == 0 and "no checksum recorded" in out and hashlib.sha256(PAYLOAD).hexdigest() in out
    # --mirror: copied, verified, and said so
    mirror = tmp_path / "m"
    mirror.mkdir()
    (mirror / "toy.csv").write_bytes(PAYLOAD)
    pinned = _registry(tmp_path, "http://127.0.0.1:9/x.csv", hashlib.sha256(PAYLOAD).hexdigest())
    code, out, err = run_cli(
        ["data", "download", "toy", "--out", str(tmp_path / "e"), "--mirror", str(mirror), "--registry", str(pinned)],
        capsys,
    )
    assert code == 0, err
    assert f"copied {mirror / 'toy.csv'} (mirror)" in out and "verified against the recorded checksum" in out
    reg = _registry(tmp_path, f"{server}/crows.csv", "f" * 64)
    code, out, err = run_cli(["data", "verify", "toy", str(f), "--registry", str(reg)], capsys)
    assert code == 2 and "does not match" in err and "Traceback" not in err
    code, _, err = run_cli(["data", "download", "nope", "--out", str(tmp_path)], capsys)
    assert code == 2 and "unknown dataset 'nope'" in err
    code, _, err = run_cli(["data", "verify", "crows-pairs", str(tmp_path / "missing.csv")], capsys)
    assert code == 2 and "missing.csv: file not found" in err


@pytest.mark.parametrize("timeout", ["0", "-1"])
def test_a_timeout_that_is_not_positive_is_refused_before_any_request(tmp_path, capsys, timeout):
    """--timeout 0 made urllib fail with 'Operation now in progress (offline?)', -1 with 'Timeout value out of
    range ... this is a bug': the option itself refuses a timeout that is not > 0, and nothing is created."""
    out = tmp_path / "d"
    args = ["data", "download", "crows-pairs", "--out", str(out), "--timeout", timeout, "--url", "http://127.0.0.1:9/x"]
    code, _, err = run_cli(args, capsys)
    assert code == 2 and err.startswith(f"error: --timeout {float(timeout)}: Input should be greater than 0."), err
    assert "bug" not in err and "offline" not in err and not out.exists()
