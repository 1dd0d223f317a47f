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
from shared.core.redaction import install_log_redaction
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
from tests.support.imds_double import ImdsDouble, imds_double

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
    kw.setdefault("github_repos", ("acme/*",))
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
    # A GitHub-looking path elsewhere, and a redirect from a listed repository to elsewhere, carry no token either.
    other_site.files["acme/private/main/runbooks/crash.md"] = "elsewhere\n"
    await _fetch(f"{other_site.url}/acme/private/main/runbooks/crash.md", config, guard)
    github.moved["acme/private/main/away.md"] = f"{other_site.url}/site/runbook.md"
    hop = await _fetch(f"{github.url}/acme/private/main/away.md", config, guard)
    assert hop.status == "ok"
    assert hop.text == RUNBOOK
    assert len(other_site.headers_for("/")) == 3
    assert all("authorization" not in headers for headers in other_site.headers_for("/"))
    assert github.headers_for("/acme/private/main/away.md")[-1]["authorization"] == f"token {TOKEN}"
    _assert_no_token(hop, caplog)


# ---- whose repositories the token opens ----------------------------------------------------------------


@pytest.fixture
def stranger(github: GitHubDouble) -> GitHubDouble:
    """A private repository of another organisation beside acme's, with a file nobody listed should reach."""
    github.files["other/secret/main/.env"] = "DB_PASSWORD=hunter2\n"
    github.private.add("other/secret")
    github.files["ops-team/runbooks/main/crash.md"] = RUNBOOK
    github.private.add("ops-team/runbooks")
    return github


async def test_the_token_goes_only_to_listed_repositories(stranger: GitHubDouble, guard: OutboundGuard, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    config = _config(stranger, github_repos=("Acme/Private", "OPS-team/*"))
    for url in [
        "https://github.com/acme/private/blob/main/runbooks/crash.md",
        "https://github.com/ACME/PRIVATE/blob/main/runbooks/crash.md",  # GitHub's names are case-insensitive
        "https://raw.githubusercontent.com/ops-team/runbooks/main/crash.md",  # owner/* covers every repository
    ]:
        result = await _fetch(url, config, guard)
        assert result.status == "ok", (url, result.error)
        assert stranger.headers_for("/")[-1]["authorization"] == f"token {TOKEN}"
        _assert_no_token(result, caplog)
    sent_before = len(stranger.requests)
    for url in [
        "https://github.com/other/secret/blob/main/.env",
        f"{stranger.url}/other/secret/main/.env",
        "https://raw.githubusercontent.com/other/secret/main/.env?token=x",
        # Look-alikes of listed names, and paths that walk out of a listed repository.
        "https://github.com/acme/private-x/blob/main/.env",
        "https://github.com/ops-team-x/runbooks/blob/main/.env",
        "https://github.com/acme/private/blob/main/../../../other/secret/main/.env",
        f"{stranger.url}/acme/private/../../other/secret/main/.env",
        f"{stranger.url}/acme/private/%2e%2e/%2e%2e/other/secret/main/.env",
    ]:
        result = await _fetch(url, config, guard)
        assert result.status in ("not_found", "refused"), (url, result)
        assert "hunter2" not in result.model_dump_json()
        _assert_no_token(result, caplog)
    unlisted = stranger.requests[sent_before:]
    assert unlisted
    assert all("authorization" not in r["headers"] for r in unlisted), unlisted  # type: ignore[operator]


@pytest.mark.parametrize(
    "path",
    [
        "acme/private/main/..%2F..%2F..%2Fother/secret/main/.env",
        "acme/private/main/%2e%2e%2f%2e%2e%2f%2e%2e%2fother/secret/main/.env",
        "acme/private/main/..%5C..%5C..%5Cother/secret/main/.env",
        "acme/private/main/..\\..\\..\\other/secret/main/.env",
        "acme/private/main/%252e%252e%252f%252e%252e%252f%252e%252e%252fother/secret/main/.env",
        "acme/private/main/..;/..;/..;/other/secret/main/.env",
        "acme/private/main/%2e%2e;/%2e%2e;/%2e%2e;/other/secret/main/.env",
    ],
)
async def test_the_token_never_rides_a_path_a_server_could_decode_out_of_the_repository(
    stranger: GitHubDouble, guard: OutboundGuard, path: str, caplog
) -> None:
    """A path that names a listed repository only until someone decodes it (an encoded slash or backslash,
    double encoding, `..;`) carries no token: GitHub Enterprise behind a proxy, or any server that decodes
    before it routes, would read it as another repository's file."""
    stranger.decode_paths = True
    config = _config(stranger, github_repos=("acme/private",))
    for url in (
        f"https://raw.githubusercontent.com/{path}",
        f"https://github.com/{path.replace('/', '/blob/', 2).replace('/blob/', '/', 1)}",
    ):
        result = await _fetch(url, config, guard)
        assert "hunter2" not in result.model_dump_json(), (url, result)
        assert result.status in ("not_found", "refused"), (url, result)
        _assert_no_token(result, caplog)
    assert stranger.requests
    assert all("authorization" not in h for h in stranger.headers_for("/")), stranger.requests
    # The decoding double still serves a listed repository's plain path with the token.
    ok = await _fetch("https://raw.githubusercontent.com/acme/private/main/runbooks/crash.md", config, guard)
    assert ok.status == "ok", ok


async def test_an_unlisted_private_file_and_a_missing_one_look_the_same(
    stranger: GitHubDouble, guard: OutboundGuard
) -> None:
    """No answer tells a workspace whether a private repository it was not given exists."""
    config = _config(stranger, github_repos=("acme/*",))
    private = await _fetch("https://github.com/other/secret/blob/main/.env", config, guard)
    missing = await _fetch("https://github.com/other/nothing/blob/main/.env", config, guard)
    assert private.status == "not_found"
    assert private.model_dump(exclude={"source"}) == missing.model_dump(exclude={"source"})
    # A listed repository's missing file reads the same way too.
    listed_missing = await _fetch("https://github.com/acme/private/blob/main/nothing.md", config, guard)
    assert listed_missing.model_dump(exclude={"source"}) == private.model_dump(exclude={"source"})


async def test_a_token_without_a_repository_list_is_sent_nowhere(stranger: GitHubDouble, guard: OutboundGuard) -> None:
    config = _config(stranger, github_repos=())
    result = await _fetch("https://github.com/acme/private/blob/main/runbooks/crash.md", config, guard)
    assert result.status == "not_found"
    assert "FIREBREAK_INVESTIGATIONS_GITHUB_REPOS" in (result.error or "")
    public = await _fetch("https://github.com/acme/ops/blob/main/runbooks/crash.md", config, guard)
    assert public.status == "ok"
    assert stranger.requests
    assert all("authorization" not in headers for headers in stranger.headers_for("/"))


async def test_the_token_is_checked_again_on_every_redirect(stranger: GitHubDouble, guard: OutboundGuard) -> None:
    """A listed repository that redirects (a renamed repository answers 301) to an unlisted one on the
    same origin does not carry the token along."""
    stranger.moved["acme/ops/main/moved.md"] = f"{stranger.url}/other/secret/main/.env"
    stranger.moved["acme/ops/main/relative.md"] = "/other/secret/main/.env"
    config = _config(stranger, github_repos=("acme/ops",))
    for name in ("moved.md", "relative.md"):
        result = await _fetch(f"https://github.com/acme/ops/blob/main/{name}", config, guard)
        assert result.status == "not_found", result
        assert "hunter2" not in result.model_dump_json()
        assert stranger.headers_for(f"/acme/ops/main/{name}")[-1]["authorization"] == f"token {TOKEN}"
        assert "authorization" not in stranger.headers_for("/other/secret/")[-1]
    assert len(stranger.headers_for("/other/secret/")) == 2


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

S3_KEY_ID = "AKIAFIREBREAKRUNBOOKS"
S3_SECRET = "s3-secret-access-key-for-runbooks-0123456789"


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
def no_ambient_aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[ImdsDouble]:
    """A worker with no AWS credentials of its own but an instance metadata service: the IMDS double, where
    botocore looks for one (AWS_EC2_METADATA_SERVICE_ENDPOINT). Every other source of the chain is empty."""
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_ROLE_ARN",
        "AWS_EC2_METADATA_DISABLED",
        "AWS_DEFAULTS_MODE",
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_S3",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    with imds_double() as imds:
        monkeypatch.setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url)
        yield imds


@pytest.fixture
async def bucket(moto_endpoint: str, no_ambient_aws: ImdsDouble) -> AsyncIterator[str]:
    boto3 = importlib.import_module("boto3")  # no type information; the module under test imports it the same way
    name = f"runbooks-{uuid.uuid4().hex[:8]}"
    client = boto3.client(
        "s3",
        region_name="us-east-1",
        endpoint_url=moto_endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    client.create_bucket(Bucket=name)
    client.put_object(Bucket=name, Key="k8s/crash.md", Body=RUNBOOK.encode(), ContentType="text/markdown")
    client.put_object(Bucket=name, Key="untyped.md", Body=b"# untyped\n")
    client.put_object(Bucket=name, Key="big.txt", Body=b"y" * 5000, ContentType="text/plain")
    client.put_object(Bucket=name, Key="empty.md", Body=b"", ContentType="text/markdown")
    client.put_object(Bucket=name, Key="image.png", Body=b"\x89PNG", ContentType="image/png")
    yield name
    client.close()


def _s3_config(endpoint: str, **kw: Any) -> RunbookSettings:
    return RunbookSettings(
        s3_endpoint_url=endpoint,
        s3_access_key_id=SecretStr(S3_KEY_ID),
        s3_secret_access_key=SecretStr(S3_SECRET),
        **kw,
    )


def _assert_no_s3_secret(result: RunbookResult, caplog: pytest.LogCaptureFixture) -> None:
    for secret in (S3_KEY_ID, S3_SECRET):
        assert secret not in result.model_dump_json()
        assert secret not in caplog.text


async def test_s3_runbooks(bucket: str, moto_endpoint: str, guard: OutboundGuard, caplog) -> None:
    install_log_redaction()  # as function_app.py does: botocore's debug lines carry `Credential=<key id>/...`
    caplog.set_level(logging.DEBUG)
    config = _s3_config(moto_endpoint, max_bytes=4096, s3_buckets=(bucket, "no-such-bucket-here"))
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
    for result in (ok, untyped, big, empty, image, missing, no_bucket):
        _assert_no_s3_secret(result, caplog)


@pytest.mark.parametrize("defaults_mode", [None, "auto"], ids=["default", "AWS_DEFAULTS_MODE=auto"])
async def test_s3_never_asks_the_instance_metadata_service(
    bucket: str,
    moto_endpoint: str,
    guard: OutboundGuard,
    no_ambient_aws: ImdsDouble,
    monkeypatch: pytest.MonkeyPatch,
    defaults_mode: str | None,
) -> None:
    """Without explicit settings an s3:// runbook is refused before botocore runs; with them the client uses
    those credentials only. Either way the worker's instance role (IMDS) is never asked, not even for the
    region botocore's `auto` defaults mode looks up there."""
    if defaults_mode:
        monkeypatch.setenv("AWS_DEFAULTS_MODE", defaults_mode)
    url = f"s3://{bucket}/k8s/crash.md"
    for config in (
        RunbookSettings(),
        RunbookSettings(s3_endpoint_url=moto_endpoint),
        RunbookSettings(s3_endpoint_url=moto_endpoint, s3_access_key_id=SecretStr(S3_KEY_ID)),
        RunbookSettings(s3_access_key_id=SecretStr(S3_KEY_ID), s3_secret_access_key=SecretStr(S3_SECRET)),
    ):
        result = await _fetch(url, config, guard)
        assert no_ambient_aws.requests == [], result
        assert result.status == "refused", (config, result)
        assert "FIREBREAK_INVESTIGATIONS_S3_" in (result.error or "")
        assert result.text == ""
    ok = await _fetch(url, _s3_config(moto_endpoint, s3_buckets=(bucket,)), guard)
    assert ok.status == "ok", ok
    assert no_ambient_aws.requests == []


async def test_s3_endpoint_goes_through_the_guard(bucket: str, moto_endpoint: str, settings: Settings) -> None:
    strict = OutboundGuard(settings.model_copy(update={"outbound_allow_http": True, "outbound_allowed_hosts": []}))
    result = await _fetch(f"s3://{bucket}/k8s/crash.md", _s3_config(moto_endpoint, s3_buckets=(bucket,)), strict)
    assert result.status == "refused"
    assert "s3_endpoint_url" in (result.error or "")


async def test_s3_without_boto3_says_so(monkeypatch: pytest.MonkeyPatch, guard: OutboundGuard) -> None:
    for module in ("boto3", "botocore", "botocore.session", "botocore.config", "botocore.exceptions"):
        monkeypatch.setitem(sys.modules, module, None)  # what an install without the optional extra looks like
    result = await _fetch(
        "s3://some-bucket/runbook.md", _s3_config("http://127.0.0.1:1", s3_buckets=("some-bucket",)), guard
    )
    assert result.status == "error"
    assert "boto3" in (result.error or "")


async def test_s3_keys_read_only_the_listed_buckets(
    bucket: str, moto_endpoint: str, guard: OutboundGuard, no_ambient_aws: ImdsDouble, caplog
) -> None:
    """The S3 keys are the deployment's, like the GitHub token: a workspace naming another bucket those keys
    can read gets neither its text nor an answer that tells it the bucket or the object exists."""
    boto3 = importlib.import_module("boto3")
    other = f"payroll-{uuid.uuid4().hex[:8]}"
    client = boto3.client(
        "s3", region_name="us-east-1", endpoint_url=moto_endpoint, aws_access_key_id="t", aws_secret_access_key="t"
    )
    client.create_bucket(Bucket=other)
    client.put_object(Bucket=other, Key="salaries.md", Body=b"# alice 250000\n", ContentType="text/markdown")
    client.close()
    config = _s3_config(moto_endpoint, s3_buckets=(bucket,))
    taken = await _fetch(f"s3://{other}/salaries.md", config, guard)
    assert taken.status == "refused", taken
    assert "250000" not in taken.model_dump_json()
    gone = await _fetch(f"s3://{other}/nothing.md", config, guard)
    absent = await _fetch("s3://no-such-bucket-at-all/salaries.md", config, guard)
    assert taken.model_dump(exclude={"source"}) == gone.model_dump(exclude={"source"})
    assert taken.model_dump(exclude={"source"}) == absent.model_dump(exclude={"source"})
    assert "FIREBREAK_INVESTIGATIONS_S3_BUCKETS" in (taken.error or "")
    assert (await _fetch(f"s3://{bucket}/k8s/crash.md", config, guard)).status == "ok"
    # Without a list, nothing is read with the keys.
    assert (await _fetch(f"s3://{bucket}/k8s/crash.md", _s3_config(moto_endpoint), guard)).status == "refused"
    _assert_no_s3_secret(taken, caplog)
