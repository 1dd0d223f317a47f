"""POST /api/artifacts multipart limits over the wire: refused while parsing, nothing written, exact bytes stored."""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path

import httpx

from devhost.processes import HostProcess

SLOW = Path(__file__).resolve().parents[1] / "fixtures" / "slowlog" / "small.log"
CT = "multipart/form-data; boundary=XyZ"


def _part(name: str, data: bytes, filename: str | None = None) -> bytes:
    disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
    return b"--XyZ\r\nContent-Disposition: " + disposition.encode() + b"\r\n\r\n" + data + b"\r\n"


def _validated(host: HostProcess, ws: dict[str, str], names: list[str]) -> int:
    r = httpx.post(
        f"{host.base_url}/api/tools/artifacts.validate",
        json={"artifacts": [{"blob": n} for n in names]},
        headers=ws,
        timeout=60,
    )
    return r.json()["counts"]["ok"]


def test_two_hundred_thousand_empty_parts_are_refused_and_nothing_is_written(host: HostProcess) -> None:
    ws = {"x-dev-workspace": f"ws-mp-{uuid.uuid4().hex[:8]}"}
    body = (
        _part("file", SLOW.read_bytes(), "first.log")
        + b'--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\n\r\n' * 200_000
        + b"--XyZ--\r\n"
    )
    assert len(body) > 2_000_000
    r = httpx.post(f"{host.base_url}/api/artifacts", content=body, headers={**ws, "content-type": CT}, timeout=120)
    assert r.status_code == 400, r.text[:300]
    error = r.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert "at most 20 parts" in error["message"]
    assert error["details"]["errors"][0]["problem"] == "too many parts"
    assert _validated(host, ws, ["first.log"]) == 0
    assert httpx.get(f"{host.base_url}/api/health", timeout=30).status_code == 200


def test_twenty_one_files_are_refused(host: HostProcess) -> None:
    ws = {"x-dev-workspace": f"ws-mp-{uuid.uuid4().hex[:8]}"}
    body = b"".join(_part("file", SLOW.read_bytes(), f"s{i}.log") for i in range(21)) + b"--XyZ--\r\n"
    r = httpx.post(f"{host.base_url}/api/artifacts", content=body, headers={**ws, "content-type": CT}, timeout=120)
    assert r.status_code == 400
    assert r.json()["error"]["details"]["errors"][0]["problem"] == "too many parts"
    assert _validated(host, ws, ["s0.log"]) == 0


def test_endless_part_headers_are_refused(host: HostProcess) -> None:
    body = b'--XyZ\r\nContent-Disposition: form-data; name="f"; filename="f.log"\r\nX-Pad: ' + b"a" * 3_000_000
    r = httpx.post(f"{host.base_url}/api/artifacts", content=body, headers={"content-type": CT}, timeout=120)
    assert r.status_code == 400
    assert r.json()["error"]["details"]["errors"][0]["problem"] == "part headers too large"


def test_multipart_file_is_stored_byte_for_byte(host: HostProcess) -> None:
    """Line endings and a boundary look-alike inside the file survive; the stored SHA-256 is the file's."""
    ws = {"x-dev-workspace": f"ws-mp-{uuid.uuid4().hex[:8]}"}
    data = SLOW.read_bytes().replace(b"\n", b"\r\n") + b"-- --XyZ-ish\r\n\r\n"
    body = _part("file", data, "crlf.log") + b"--XyZ--\r\n"
    r = httpx.post(f"{host.base_url}/api/artifacts", content=body, headers={**ws, "content-type": CT}, timeout=120)
    assert r.status_code == 201, r.text[:300]
    [item] = r.json()["artifacts"]
    assert item["blob"] == "crlf.log"
    assert item["size_bytes"] == len(data)
    assert item["sha256"] == hashlib.sha256(data).hexdigest()
