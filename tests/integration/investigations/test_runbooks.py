"""fetch_runbook against real servers: a GitHub-like double (plain and TLS), Azurite, moto's S3 server, and
hostile URLs; the GitHub token reaches the GitHub origin only and never a result or a log line."""

from __future__ import annotations

import importlib
import logging
import ssl
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from shared.core.outbound import OutboundGuard
from shared.core.settings import Settings
from shared.investigations.runbooks import (
    RunbookResult,
    RunbookSettings,
    fetch_runbook,
    load_catalogue,
    match_runbook,
)
from shared.tools.deps import Deps
from tests.support.github_double import GitHubDouble, github_double

TOKEN = "ghp_SECRETsecret0123456789abcdef"
RUNBOOK = "# KubePodCrashLooping\n\nCheck `kubectl logs --previous`.\n"


@pytest.fixture
def guard(settings: Settings) -> OutboundGuard:
    """Loopback allowed (as collect.run's tests do), plain http allowed for the plain double."""
    local = settings.model_copy(update={"outbound_allow_http": True, "outbound_allowed_hosts": ["127.0.0.1/32"]})
    return OutboundGuard(local)


@pytest.fixture
def github() -> Iterator[GitHubDouble]:
    with github_double(token=TOKEN) as double:
        double.files["acme/ops/main/runbooks/crash.md"] = RUNBOOK
        double.files["acme/private/main/runbooks/crash.md"] = "# Private runbook\n"
        double.files["acme/ops/main/echo.md"] = f"token in the text: {TOKEN}\n"
        double.private.add("acme/private")
        yield double


@pytest.fixture
def other_site() -> Iterator[GitHubDouble]:
    with github_double(token="unused") as double:
        double.pages["runbook.md"] = ("text/markdown; charset=utf-8", RUNBOOK.encode())
        double.pages["page.html"] = ("text/html", b"<html><body><h1>Steps</h1><p>Restart it.</p></body></html>")
        double.pages["binary"] = ("application/zip", b"PK\x03\x04")
        double.pages["untyped.md"] = ("application/octet-stream", b"# untyped\n")
        double.pages["latin1.txt"] = ("text/plain; charset=iso-8859-1", "caf\xe9\n".encode("latin-1"))
        yield double


def _config(github: GitHubDouble, **kw: Any) -> RunbookSettings:
    return RunbookSettings(github_token=SecretStr(TOKEN), github_raw_base_url=github.url, **kw)


async def _fetch(url: str, config: RunbookSettings, guard: OutboundGuard, **kw: Any) -> RunbookResult:
    kw.setdefault("blobs", None)
    kw.setdefault("workspace", "ws1")
    return await fetch_runbook(url, config, guard=guard, **kw)


def _assert_no_token(result: RunbookResult, caplog: pytest.LogCaptureFixture) -> None:
    assert TOKEN not in result.model_dump_json()
    assert TOKEN not in caplog.text
    assert all(TOKEN not in r.getMessage() for r in caplog.records)


# ---- GitHub --------------------------------------------------------------------------------------------


async def test_github_raw_and_blob_urls(github: GitHubDouble, guard: OutboundGuard, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    config = _config(github)
    for url in [
        f"{github.url}/acme/ops/main/runbooks/crash.md",
        "https://github.com/acme/ops/blob/main/runbooks/crash.md",
        "https://raw.githubusercontent.com/acme/ops/main/runbooks/crash.md",
    ]:
        result = await _fetch(url, config, guard)
        assert result.status == "ok", (url, result.error)
        assert result.kind == "github"
        assert result.text == RUNBOOK
        assert result.content_type == "text/plain"
        assert not result.truncated
        assert result.size_bytes == len(RUNBOOK.encode())
        _assert_no_token(result, caplog)
    # The github.com and raw.githubusercontent.com forms went to the configured raw origin, never out.
    assert [r["path"] for r in github.requests] == ["/acme/ops/main/runbooks/crash.md"] * 3


async def test_private_repository_needs_the_token(github: GitHubDouble, guard: OutboundGuard, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    url = "https://github.com/acme/private/blob/main/runbooks/crash.md"
    result = await _fetch(url, _config(github), guard)
    assert result.status == "ok"
    assert result.text == "# Private runbook\n"
    assert github.headers_for("/acme/private/")[-1]["authorization"] == f"token {TOKEN}"
    _assert_no_token(result, caplog)

    anonymous = await _fetch(url, RunbookSettings(github_raw_base_url=github.url), guard)
    assert anonymous.status == "not_found"
    assert "GITHUB_TOKEN" in (anonymous.error or "")
    assert "authorization" not in github.headers_for("/acme/private/")[-1]


async def test_the_token_goes_to_the_github_origin_only(
    github: GitHubDouble, other_site: GitHubDouble, guard: OutboundGuard, caplog
) -> None:
    caplog.set_level(logging.DEBUG)
    config = _config(github)
    result = await _fetch(f"{other_site.url}/site/runbook.md", config, guard)
    assert result.status == "ok"
    assert result.kind == "https"
    assert result.text == RUNBOOK
    # A GitHub-looking path elsewhere, and a redirect from GitHub to elsewhere, carry no token either.
    other_site.files["acme/private/main/runbooks/crash.md"] = "elsewhere\n"
    await _fetch(f"{other_site.url}/acme/private/main/runbooks/crash.md", config, guard)
    hop = await _fetch(f"{github.url}/redirect?to={other_site.url}/site/runbook.md", config, guard)
    assert hop.status == "ok"
    assert hop.text == RUNBOOK
    assert len(other_site.headers_for("/")) == 3
    assert all("authorization" not in headers for headers in other_site.headers_for("/"))
    assert github.headers_for("/redirect")[-1]["authorization"] == f"token {TOKEN}"
    _assert_no_token(hop, caplog)


async def test_the_token_is_scrubbed_from_text_source_and_errors(
    github: GitHubDouble, guard: OutboundGuard, caplog
) -> None:
    caplog.set_level(logging.DEBUG)
    config = _config(github)
    echoed = await _fetch(f"{github.url}/acme/ops/main/echo.md", config, guard)
    assert echoed.status == "ok"
    assert "[REDACTED]" in echoed.text
    _assert_no_token(echoed, caplog)
    in_query = await _fetch(f"{github.url}/acme/ops/main/missing.md?token={TOKEN}", config, guard)
    assert in_query.status == "not_found"
    _assert_no_token(in_query, caplog)
    refused = await _fetch(f"https://{TOKEN}@127.0.0.1:1/acme/ops/main/x.md", config, guard)
    assert refused.status == "refused"
    _assert_no_token(refused, caplog)


# ---- plain https ---------------------------------------------------------------------------------------


@pytest.fixture
def tls_site(tmp_path: Path) -> Iterator[GitHubDouble]:
    with github_double(token="unused", tls_dir=tmp_path) as double:
        double.pages["runbook.md"] = ("text/markdown", RUNBOOK.encode())
        yield double


async def test_https_with_a_trusted_certificate(tls_site: GitHubDouble, settings: Settings) -> None:
    assert tls_site.cert_path is not None
    context = ssl.create_default_context(cafile=str(tls_site.cert_path))
    https_only = OutboundGuard(settings.model_copy(update={"outbound_allowed_hosts": ["127.0.0.1"]}))
    result = await _fetch(f"{tls_site.url}/site/runbook.md", RunbookSettings(), https_only, ssl_context=context)
    assert result.status == "ok"
    assert result.kind == "https"
    assert result.content_type == "text/markdown"
    assert result.text == RUNBOOK
    # Without trusting the certificate the fetch fails as an error, not an exception.
    untrusted = await _fetch(f"{tls_site.url}/site/runbook.md", RunbookSettings(), https_only)
    assert untrusted.status == "error"
    assert untrusted.text == ""
    # https -> http is a downgrade the https-only guard refuses.
    downgrade = await _fetch(
        f"{tls_site.url}/redirect?to=http://127.0.0.1:1/x.md", RunbookSettings(), https_only, ssl_context=context
    )
    assert downgrade.status == "refused"
    assert "https" in (downgrade.error or "")


async def test_content_types(other_site: GitHubDouble, guard: OutboundGuard) -> None:
    config = RunbookSettings()
    html = await _fetch(f"{other_site.url}/site/page.html", config, guard)
    assert html.status == "ok"
    assert html.text == "# Steps\n\nRestart it.\n"
    assert html.content_type == "text/markdown"
    untyped = await _fetch(f"{other_site.url}/site/untyped.md", config, guard)
    assert untyped.status == "ok"
    assert untyped.text == "# untyped\n"
    latin = await _fetch(f"{other_site.url}/site/latin1.txt", config, guard)
    assert latin.status == "ok"
    assert latin.text == "caf\xe9\n"
    binary = await _fetch(f"{other_site.url}/site/binary", config, guard)
    assert binary.status == "refused"
    assert "application/zip" in (binary.error or "")
    assert binary.text == ""
    missing = await _fetch(f"{other_site.url}/site/none.md", config, guard)
    assert missing.status == "not_found"


# ---- hostile URLs --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "http://[fd00:ec2::254]/latest/meta-data/",
        "http://10.0.0.1/runbook.md",
        "http://[::1]:8080/runbook.md",
        "https://user:pass@example.com/runbook.md",
        "http://127.0.0.1@169.254.169.254/",
    ],
)
async def test_hostile_urls_are_refused(url: str, guard: OutboundGuard) -> None:
    result = await _fetch(url, RunbookSettings(), guard)
    assert result.status == "refused", result
    assert result.text == ""
    assert result.error


async def test_redirects_are_checked_at_every_hop(other_site: GitHubDouble, guard: OutboundGuard) -> None:
    base = f"{other_site.url}/redirect?to="
    for target in [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.1.2.3/x.md",
        "file:///etc/passwd",
        "http://[::1]/",
    ]:
        result = await _fetch(base + target, RunbookSettings(), guard)
        assert result.status == "refused", target
    loop = await _fetch(f"{base}{base}{base}{other_site.url}/site/runbook.md", RunbookSettings(max_redirects=2), guard)
    assert loop.status == "refused"
    assert "redirects" in (loop.error or "")
    followed = await _fetch(f"{base}/site/runbook.md", RunbookSettings(), guard)
    assert followed.status == "ok"
    assert followed.text == RUNBOOK


async def test_a_private_address_needs_the_allow_list(other_site: GitHubDouble, settings: Settings) -> None:
    strict = OutboundGuard(settings.model_copy(update={"outbound_allow_http": True, "outbound_allowed_hosts": []}))
    result = await _fetch(f"{other_site.url}/site/runbook.md", RunbookSettings(), strict)
    assert result.status == "refused"
    assert "non-public" in (result.error or "")
    assert other_site.requests == []


async def test_a_huge_body_is_cut_at_the_limit(other_site: GitHubDouble, guard: OutboundGuard) -> None:
    result = await _fetch(
        f"{other_site.url}/big?bytes={10 * 1024 * 1024}", RunbookSettings(max_bytes=256 * 1024), guard
    )
    assert result.status == "ok"
    assert result.truncated
    assert result.size_bytes == 256 * 1024
    assert len(result.text) == 256 * 1024


async def test_a_slow_server_runs_out_of_time(other_site: GitHubDouble, guard: OutboundGuard) -> None:
    result = await _fetch(f"{other_site.url}/slow?seconds=30", RunbookSettings(timeout_seconds=0.5), guard)
    assert result.status == "error"
    assert "within 0.5 s" in (result.error or "")


# ---- Azure Blob (Azurite) ------------------------------------------------------------------------------


async def test_blob_runbooks_stay_in_the_callers_workspace(deps: Deps, guard: OutboundGuard) -> None:
    ws, other = f"ws-{uuid.uuid4().hex[:8]}", f"ws-{uuid.uuid4().hex[:8]}"
    await deps.blobs.put(f"{ws}/runbooks/crash.md", RUNBOOK, content_type="text/markdown")
    await deps.blobs.put(f"{ws}/runbooks/plain.md", b"# untyped\n")
    await deps.blobs.put(f"{ws}/runbooks/big.txt", b"x" * 5000, content_type="text/plain")
    await deps.blobs.put(f"{other}/runbooks/theirs.md", "# theirs\n", content_type="text/markdown")
    config = RunbookSettings(max_bytes=4096)
    ok = await _fetch("blob:runbooks/crash.md", config, guard, blobs=deps.blobs, workspace=ws)
    assert ok.status == "ok"
    assert ok.kind == "blob"
    assert ok.text == RUNBOOK
    assert ok.content_type == "text/markdown"
    untyped = await _fetch("blob:runbooks/plain.md", config, guard, blobs=deps.blobs, workspace=ws)
    assert untyped.status == "ok"
    assert untyped.text == "# untyped\n"
    big = await _fetch("blob:runbooks/big.txt", config, guard, blobs=deps.blobs, workspace=ws)
    assert big.status == "ok"
    assert big.truncated
    assert big.size_bytes == 4096
    theirs = await _fetch("blob:runbooks/theirs.md", config, guard, blobs=deps.blobs, workspace=ws)
    assert theirs.status == "not_found"
    for sneaky in [f"blob:../{other}/runbooks/theirs.md", "blob:/etc/passwd", "blob:runbooks//x.md", "blob:a b.md"]:
        result = await _fetch(sneaky, config, guard, blobs=deps.blobs, workspace=ws)
        assert result.status == "refused", sneaky


async def test_blob_catalogue_matches_and_fetches(deps: Deps, guard: OutboundGuard, tmp_path: Path) -> None:
    ws = f"ws-{uuid.uuid4().hex[:8]}"
    crash = "---\ntitle: Crash loops\nmatch: [KubePodCrashLooping, 'KubePod* namespace=payments']\n---\n# Crash\n"
    await deps.blobs.put(f"{ws}/runbooks/k8s/crash.md", crash, content_type="text/markdown")
    await deps.blobs.put(f"{ws}/runbooks/kube-node-not-ready.md", "# Node\n", content_type="text/markdown")
    await deps.blobs.put(f"{ws}/runbooks/readme.json", "{}", content_type="application/json")
    (tmp_path / "kube-pod-crash-looping.md").write_text("# shared folder runbook\n")
    config = RunbookSettings(catalogue_prefix="runbooks", catalogue_folder=str(tmp_path))
    catalogue = await load_catalogue(config, blobs=deps.blobs, workspace=ws)
    assert [e.url for e in catalogue.entries] == [
        "blob:runbooks/k8s/crash.md",
        "blob:runbooks/kube-node-not-ready.md",
        "catalogue:kube-pod-crash-looping.md",
    ]
    assert catalogue.entries[0].title == "Crash loops"
    assert catalogue.errors == []
    hit = match_runbook("KubePodNotReady", {"namespace": "payments"}, catalogue)
    assert hit is not None
    assert hit.name == "runbooks/k8s/crash.md"
    hit = match_runbook("KubeNodeNotReady", {}, catalogue)
    assert hit is not None
    result = await _fetch(hit.url, config, guard, blobs=deps.blobs, workspace=ws)
    assert result.status == "ok"
    assert result.text == "# Node\n"
    empty = await load_catalogue(config, blobs=deps.blobs, workspace=f"ws-{uuid.uuid4().hex[:8]}")
    assert [e.url for e in empty.entries] == ["catalogue:kube-pod-crash-looping.md"]


# ---- S3 (moto server) ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture
async def bucket(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[str]:
    boto3 = importlib.import_module("boto3")  # no type information; the module under test imports it the same way
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    name = f"runbooks-{uuid.uuid4().hex[:8]}"
    client = boto3.client("s3", region_name="us-east-1", endpoint_url=moto_endpoint)
    client.create_bucket(Bucket=name)
    client.put_object(Bucket=name, Key="k8s/crash.md", Body=RUNBOOK.encode(), ContentType="text/markdown")
    client.put_object(Bucket=name, Key="untyped.md", Body=b"# untyped\n")
    client.put_object(Bucket=name, Key="big.txt", Body=b"y" * 5000, ContentType="text/plain")
    client.put_object(Bucket=name, Key="empty.md", Body=b"", ContentType="text/markdown")
    client.put_object(Bucket=name, Key="image.png", Body=b"\x89PNG", ContentType="image/png")
    yield name
    client.close()


async def test_s3_runbooks(bucket: str, moto_endpoint: str, guard: OutboundGuard) -> None:
    config = RunbookSettings(s3_endpoint_url=moto_endpoint, max_bytes=4096)
    ok = await _fetch(f"s3://{bucket}/k8s/crash.md", config, guard)
    assert ok.status == "ok"
    assert ok.kind == "s3"
    assert ok.text == RUNBOOK
    assert ok.content_type == "text/markdown"
    assert ok.source == f"s3://{bucket}/k8s/crash.md"
    untyped = await _fetch(f"s3://{bucket}/untyped.md", config, guard)
    assert untyped.status == "ok"
    assert untyped.text == "# untyped\n"
    big = await _fetch(f"s3://{bucket}/big.txt", config, guard)
    assert big.status == "ok"
    assert big.truncated
    assert big.size_bytes == 4096
    empty = await _fetch(f"s3://{bucket}/empty.md", config, guard)
    assert empty.status == "ok"
    assert empty.text == ""
    image = await _fetch(f"s3://{bucket}/image.png", config, guard)
    assert image.status == "refused"
    missing = await _fetch(f"s3://{bucket}/nope.md", config, guard)
    assert missing.status == "not_found"
    assert "NoSuchKey" in (missing.error or "")
    no_bucket = await _fetch("s3://no-such-bucket-here/x.md", config, guard)
    assert no_bucket.status == "not_found"


async def test_s3_endpoint_goes_through_the_guard(bucket: str, moto_endpoint: str, settings: Settings) -> None:
    strict = OutboundGuard(settings.model_copy(update={"outbound_allow_http": True, "outbound_allowed_hosts": []}))
    result = await _fetch(f"s3://{bucket}/k8s/crash.md", RunbookSettings(s3_endpoint_url=moto_endpoint), strict)
    assert result.status == "refused"
    assert "s3_endpoint_url" in (result.error or "")


async def test_s3_without_boto3_says_so(monkeypatch: pytest.MonkeyPatch, guard: OutboundGuard) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)  # what an install without the optional extra looks like
    result = await _fetch("s3://some-bucket/runbook.md", RunbookSettings(), guard)
    assert result.status == "error"
    assert "boto3" in (result.error or "")
