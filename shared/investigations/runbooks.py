"""Runbooks for an alert: fetched from GitHub, plain HTTPS, the app's Blob container or S3, or matched from a catalogue.

`fetch_runbook` never raises: a missing, refused or failing runbook is a `RunbookResult` with a status
and a safe error, because the investigation goes on without it. Every caller-chosen URL (and each
redirect) passes the outbound guard, and the connection goes to the address the guard checked. The
GitHub token is sent only to the configured GitHub raw origin, for a repository the deployment lists
(checked again at every redirect), and is scrubbed from anything returned. S3 runs only with the
deployment's own endpoint and keys, never the worker's AWS identity.
"""

from __future__ import annotations

import asyncio
import fnmatch
import importlib
import logging
import re
import socket
import ssl
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urljoin, urlsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SecretStr, field_validator

from shared.core import charsets
from shared.core.errors import ValidationFailed
from shared.core.outbound import OutboundGuard
from shared.core.redaction import REDACTED, redact_text
from shared.investigations.html_text import html_to_text
from shared.storage.blob import BlobStore

log = logging.getLogger(__name__)

USER_AGENT = "firebreak-runbooks/1"
MAX_URL_CHARS = 2048
FRONT_MATTER_BYTES = 8192
TEXT_SUFFIXES = (".md", ".markdown", ".mdown", ".txt")
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_TEXT_TYPES = frozenset({"text/markdown", "text/x-markdown", "text/plain"})
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# What object stores and some servers label any upload with; accepted only for a text file name.
_UNTYPED = frozenset({"", "application/octet-stream", "binary/octet-stream"})
_GITHUB_WEB_HOSTS = frozenset({"github.com", "www.github.com"})
_GITHUB_RAW_HOST = "raw.githubusercontent.com"
_BLOB_NAME = re.compile(r"[A-Za-z0-9._/-]{1,512}")
_S3_URL = re.compile(r"s3://([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])/([^\x00-\x1f\x7f]{1,1024})")
# What a server that decodes or normalises before it routes (GitHub Enterprise behind a proxy, a framework
# reading `..;` as `..`) could turn into a step out of the repository the path names: an encoded `/`, `\`, `.`,
# `;`, `%` (double encoding) or control character, a backslash, `;`, or a dot segment. Such a path gets no
# token (a public file at it is still read).
_UNCLEAR_PATH = re.compile(r"%(?:2f|5c|2e|3b|25|[01][0-9a-f]|7f)|[\\;]|(?:^|/)\.{1,2}(?:/|$)", re.IGNORECASE)
# A GitHub owner or repository name as it appears, unencoded, in a raw URL's path.
_GITHUB_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
REPOS_SETTING = "FIREBREAK_INVESTIGATIONS_GITHUB_REPOS"
# One wording for every GitHub 404, whoever's repository it is: GitHub answers 404 without the token for a
# private repository and for a missing one alike, and a hint that varied would tell them apart.
_GITHUB_404_HINT = f" (a private repository is read only when {REPOS_SETTING} lists it and GITHUB_TOKEN is set)"
_GITHUB_UNLISTED_HINT = f" (GITHUB_TOKEN is set but {REPOS_SETTING} is empty, so it is sent nowhere: public files only)"
_S3_OFF = (
    "s3:// runbooks are off in this deployment: they need FIREBREAK_INVESTIGATIONS_S3_ENDPOINT_URL, "
    "FIREBREAK_INVESTIGATIONS_S3_ACCESS_KEY_ID and FIREBREAK_INVESTIGATIONS_S3_SECRET_ACCESS_KEY "
    "(the worker's own AWS identity is never used)"
)

S3_BUCKETS_SETTING = "FIREBREAK_INVESTIGATIONS_S3_BUCKETS"
_S3_UNLISTED = f"this bucket is not one s3:// runbooks are read from here ({S3_BUCKETS_SETTING} lists them)"

Kind = Literal["github", "https", "blob", "s3", "catalogue", "unknown"]
Status = Literal["ok", "not_found", "refused", "error"]


class RunbookSettings(BaseModel):
    """Where runbooks come from and how much of one is read (the integrator maps it to FIREBREAK_INVESTIGATIONS_*)."""

    model_config = ConfigDict(frozen=True)

    github_token: SecretStr | None = Field(
        None,
        description="Token for private GitHub repositories; sent only to github_raw_base_url's origin, for a "
        "repository in github_repos.",
    )
    github_repos: tuple[str, ...] = Field(
        (),
        description="`owner/repo` or `owner/*` (lower-cased) the token is sent for; empty: the token is sent nowhere.",
    )
    github_raw_base_url: str = Field(
        "https://raw.githubusercontent.com",
        description="Where raw GitHub files are read; github.com blob URLs are rewritten to it.",
    )
    catalogue_prefix: str | None = Field(
        "runbooks/", description="Blob prefix inside the caller's workspace holding Markdown runbooks; empty: none."
    )
    catalogue_folder: str | None = Field(None, description="A folder of Markdown runbooks shared by all workspaces.")
    catalogue_max_files: int = Field(200, ge=1, le=5000, description="Runbooks read from each catalogue source.")
    s3_endpoint_url: str | None = Field(
        None, description="S3 endpoint (AWS's regional one, MinIO, moto); empty: s3:// runbooks are refused."
    )
    s3_region: str = Field("us-east-1", description="Region of the S3 client.")
    s3_access_key_id: SecretStr | None = Field(None, description="Access key of the S3 client; none: s3:// refused.")
    s3_secret_access_key: SecretStr | None = Field(None, description="Its secret; none: s3:// refused.")
    s3_buckets: tuple[str, ...] = Field(
        (), description="Buckets s3:// runbooks may be read from with those keys; empty: s3:// refused."
    )
    max_bytes: int = Field(256 * 1024, ge=1024, le=8 * 1024 * 1024, description="Runbook bytes kept; more is cut.")
    timeout_seconds: float = Field(10.0, gt=0, le=120, description="Time for one runbook fetch, redirects included.")
    max_redirects: int = Field(3, ge=0, le=10, description="Redirects followed, each checked by the outbound guard.")

    @field_validator("github_repos", mode="before")
    @classmethod
    def _repos(cls, value: object) -> tuple[str, ...]:
        return parse_github_repos(value)

    def secrets(self) -> list[str]:
        """The credential values set here, to scrub from whatever a fetch returns or logs."""
        held = (self.github_token, self.s3_access_key_id, self.s3_secret_access_key)
        return [v.get_secret_value() for v in held if v is not None and v.get_secret_value()]


def parse_github_repos(value: object) -> tuple[str, ...]:
    """`owner/repo` or `owner/*` entries (a string with commas or spaces between them, or a list), lower-cased
    as GitHub compares names.

    Raises ValueError naming the first entry that is neither; `*/*` or a bare owner is refused, since the
    list exists to keep the token off repositories nobody chose.
    """
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise ValueError("expected owner/repo entries, comma-separated")
    found: list[str] = []
    for entry in value:
        for item in re.split(r"[\s,]+", str(entry).strip()):
            if not item:
                continue
            owner, sep, repo = item.partition("/")
            if not (sep and _is_github_name(owner) and (repo == "*" or _is_github_name(repo))):
                raise ValueError(f"{item!r} is not owner/repo or owner/*")
            found.append(item.lower())
    return tuple(dict.fromkeys(found))


def _is_github_name(name: str) -> bool:
    return bool(_GITHUB_NAME.fullmatch(name)) and name.strip(".") != ""


def repository_listed(raw_path: str, base_path: str, repos: tuple[str, ...]) -> bool:
    """Whether a raw-file request path (as sent: dot segments resolved, still percent-encoded) under the raw
    origin's `base_path` names a repository in `repos`. Anything unclear (an owner or repository that is not a
    plain name, too few segments, or anywhere in the path an encoded separator, dot, `;` or `%`, a backslash or
    a dot segment: `_UNCLEAR_PATH`) is not listed."""
    prefix = base_path.rstrip("/") + "/"
    if not raw_path.startswith(prefix):
        return False
    owner, _, rest = raw_path[len(prefix) :].partition("/")
    repo = rest.partition("/")[0]
    if not (_is_github_name(owner) and _is_github_name(repo)) or _UNCLEAR_PATH.search(rest):
        return False
    owner, repo = owner.lower(), repo.lower()
    return f"{owner}/{repo}" in repos or f"{owner}/*" in repos


class RunbookResult(BaseModel):
    """A fetched runbook, or why there is none; `source` is safe to show (no query string, no credentials)."""

    status: Status
    kind: Kind
    source: str
    text: str = ""
    content_type: str | None = None
    truncated: bool = False
    size_bytes: int = Field(0, description="Bytes kept from the source (at most max_bytes).")
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class RunbookRef(BaseModel):
    """One catalogue runbook: `url` is what fetch_runbook takes (`blob:<name>` or `catalogue:<path>`)."""

    name: str
    url: str
    title: str | None = None
    match: list[str] = Field(default_factory=list)


class Catalogue(BaseModel):
    """The runbooks found, in source order (workspace blobs first, then the shared folder)."""

    entries: list[RunbookRef] = Field(default_factory=list)
    skipped: int = Field(0, description="Files left unread past the count limit.")
    errors: list[str] = Field(default_factory=list)


class _Failure(Exception):
    def __init__(self, status: Status, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


# ---- fetching ------------------------------------------------------------------------------------------


async def fetch_runbook(
    url: str,
    config: RunbookSettings,
    *,
    guard: OutboundGuard,
    blobs: BlobStore | None,
    workspace: str,
    ssl_context: ssl.SSLContext | None = None,
) -> RunbookResult:
    """Fetch the runbook at `url`; never raises (a failure is a result with `status` and `error`).

    `url`: an https URL (GitHub raw or github.com/<owner>/<repo>/blob/<ref>/<path>, or any other
    host), `s3://bucket/key`, `blob:<name>` (inside `workspace`'s prefix of the app's container) or
    `catalogue:<path>` (inside the configured folder). Text is cut to `max_bytes` (`truncated`).
    """
    url = (url or "").strip()
    kind, source = _classify(url, config)
    try:
        result = await asyncio.wait_for(
            _fetch(kind, url, config, guard=guard, blobs=blobs, workspace=workspace, ssl_context=ssl_context),
            config.timeout_seconds,
        )
        result = await _readable(result)
        result = result.model_copy(update={"kind": kind, "source": source})
    except TimeoutError:
        result = _failed(kind, source, "error", f"no complete answer within {config.timeout_seconds:g} s")
    except _Failure as exc:
        result = _failed(kind, source, exc.status, exc.message)
    except ValidationFailed as exc:
        result = _failed(kind, source, "refused", exc.message)
    except Exception as exc:  # the investigation goes on without a runbook; the type is all that is safe to say
        result = _failed(kind, source, "error", f"fetch failed ({type(exc).__name__})")
    result = _scrubbed(result, config.secrets())
    log.info("runbook %s from %s: %s %s", kind, result.source, result.status, result.error or "")
    return result


def _failed(kind: Kind, source: str, status: Status, message: str) -> RunbookResult:
    return RunbookResult(status=status, kind=kind, source=source, error=message)


def _scrubbed(result: RunbookResult, secrets: list[str]) -> RunbookResult:
    def without_secrets(value: str) -> str:
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return value

    def clean(value: str | None) -> str | None:
        return redact_text(without_secrets(value)) if value else value

    # The text is the runbook itself: only our credentials are taken out (redact_text would mangle examples).
    text = without_secrets(result.text)
    return result.model_copy(update={"text": text, "source": clean(result.source), "error": clean(result.error)})


def _classify(url: str, config: RunbookSettings) -> tuple[Kind, str]:
    """(kind, a display form without query string or credentials)."""
    if url.startswith("blob:"):
        return "blob", url[:600]
    if url.startswith("catalogue:"):
        return "catalogue", url[:600]
    try:
        parts = urlsplit(url[:MAX_URL_CHARS])
        host = (parts.hostname or "").lower()
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "unknown", "(not a valid URL)"
    scheme = parts.scheme.lower()
    shown = f"{scheme}://{host}{port}{parts.path}"[:600]
    if scheme == "s3":
        return "s3", shown
    if scheme not in ("http", "https"):
        return "unknown", f"{scheme}:" if scheme else "(not a URL)"
    if host in _GITHUB_WEB_HOSTS or host == _GITHUB_RAW_HOST or _origin(url) == _origin(config.github_raw_base_url):
        return "github", shown
    return "https", shown


async def _fetch(
    kind: Kind,
    url: str,
    config: RunbookSettings,
    *,
    guard: OutboundGuard,
    blobs: BlobStore | None,
    workspace: str,
    ssl_context: ssl.SSLContext | None,
) -> RunbookResult:
    if len(url) > MAX_URL_CHARS:
        raise _Failure("refused", f"the runbook URL is longer than {MAX_URL_CHARS} characters")
    if kind == "blob":
        return await _fetch_blob(url.removeprefix("blob:"), config, blobs, workspace)
    if kind == "catalogue":
        return await _fetch_folder(url.removeprefix("catalogue:"), config)
    if kind == "s3":
        return await _fetch_s3(url, config, guard)
    if kind == "github":
        raw = github_raw_url(url, config.github_raw_base_url)
        if raw is None:
            raise _Failure("refused", "a GitHub URL must name a file: github.com/<owner>/<repo>/blob/<ref>/<path>")
        token = config.github_token.get_secret_value() if config.github_token else None
        return await _fetch_http(raw, config, guard, ssl_context, token=token, kind=kind)
    if kind == "https":
        return await _fetch_http(url, config, guard, ssl_context, token=None, kind=kind)
    raise _Failure("refused", "unsupported runbook location: use https://, s3://, blob: or catalogue:")


def _origin(url: str) -> tuple[str, str, int] | None:
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        return scheme, (parts.hostname or "").lower(), parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        return None


def github_raw_url(url: str, raw_base_url: str) -> str | None:
    """The raw-file URL for a GitHub file URL (raw or github.com blob/raw form) under `raw_base_url`; None if
    the URL does not name a file."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    base = raw_base_url.rstrip("/")
    segments = [s for s in parts.path.split("/") if s]
    if host in _GITHUB_WEB_HOSTS:
        # /<owner>/<repo>/blob/<ref>/<path...> (also /raw/); the query (?raw=true, ?plain=1) is for the web page.
        if len(segments) < 5 or segments[2] not in ("blob", "raw"):
            return None
        return f"{base}/{segments[0]}/{segments[1]}/{'/'.join(segments[3:])}"
    if host != _GITHUB_RAW_HOST:
        return url  # already on the configured raw origin
    if len(segments) < 4:
        return None
    # The query stays: GitHub's own `?token=` links to private raw files work that way (the display form
    # drops it).
    query = f"?{parts.query}" if parts.query else ""
    return f"{base}/{'/'.join(segments)}{query}"


def _hint(kind: Kind, config: RunbookSettings) -> str:
    """What a GitHub 404 adds: it depends on the deployment's settings only, never on the repository."""
    if kind != "github":
        return ""
    return _GITHUB_UNLISTED_HINT if config.github_token and not config.github_repos else _GITHUB_404_HINT


class _PinnedResolver:
    """aiohttp resolver that answers only with addresses the outbound guard returned for that host and port."""

    def __init__(self) -> None:
        self.pins: dict[tuple[str, int], str] = {}

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[dict[str, Any]]:
        address = self.pins.get((host.lower(), port))
        if address is None:
            raise OSError(f"{host}:{port} was not checked by the outbound guard")
        return [
            {
                "hostname": host,
                "host": address,
                "port": port,
                "family": socket.AF_INET6 if ":" in address else socket.AF_INET,
                "proto": 0,
                "flags": socket.AI_NUMERICHOST,
            }
        ]

    async def close(self) -> None:
        return None


async def _fetch_http(
    url: str,
    config: RunbookSettings,
    guard: OutboundGuard,
    ssl_context: ssl.SSLContext | None,
    *,
    token: str | None,
    kind: Kind,
) -> RunbookResult:
    import aiohttp
    from yarl import URL

    auth_origin = _origin(config.github_raw_base_url) if token else None
    auth_base_path = URL(config.github_raw_base_url).raw_path
    resolver = _PinnedResolver()
    # A session per fetch: its resolver holds this fetch's guarded addresses, and a runbook is read once
    # per investigation, so there is no pool worth keeping. trust_env=False: no proxy from the environment.
    connector = aiohttp.TCPConnector(
        resolver=resolver,  # type: ignore[arg-type]  # duck-typed AbstractResolver
        use_dns_cache=False,
        force_close=True,
        ssl=ssl_context if ssl_context is not None else True,
    )
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=config.timeout_seconds)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout, trust_env=False) as session:
        current = url
        for _ in range(config.max_redirects + 1):
            target = await guard.resolve(current, "runbook_url")
            resolver.pins[(target.host, target.port)] = target.address
            headers = {"User-Agent": USER_AGENT, "Accept": "text/markdown, text/plain;q=0.9, text/html;q=0.5"}
            # The path checked is the one aiohttp sends (yarl resolves `..` and `%2e%2e`), at every hop: a
            # listed repository may redirect to one that is not, on the same origin.
            request_url = URL(current)
            if (
                token
                and _origin(current) == auth_origin
                and repository_listed(request_url.raw_path, auth_base_path, config.github_repos)
            ):
                headers["Authorization"] = f"token {token}"
            async with session.get(request_url, headers=headers, allow_redirects=False) as response:
                if response.status in _REDIRECTS:
                    location = response.headers.get("Location")
                    if not location:
                        raise _Failure("error", f"HTTP {response.status} without a Location")
                    current = urljoin(current, location)
                    continue
                if response.status in (404, 410):
                    raise _Failure("not_found", f"HTTP {response.status}: no runbook at this URL{_hint(kind, config)}")
                if response.status >= 400:
                    raise _Failure("error", f"HTTP {response.status} from the runbook host")
                if response.status != 200:
                    raise _Failure("error", f"unexpected HTTP {response.status}")
                body, truncated = await _read_bounded(response.content, config.max_bytes)
                ctype = response.headers.get("Content-Type", "")
                return _text_result(body, truncated, ctype, urlsplit(current).path, kind)
        raise _Failure("refused", f"more than {config.max_redirects} redirects")


async def _read_bounded(stream: Any, limit: int) -> tuple[bytes, bool]:
    """At most `limit` bytes of a stream, and whether there was more (read no further than limit + 1)."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = await stream.read(min(65536, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    body = b"".join(chunks)
    return body[:limit], size > limit


class _Undecoded(RunbookResult):
    """A fetched body not yet turned into text: `_readable` does that in a worker thread."""

    _body: bytes = PrivateAttr(b"")
    _charset: str = PrivateAttr(charsets.DEFAULT)
    _html: bool = PrivateAttr(False)

    def decoded(self) -> RunbookResult:
        """The runbook's text: decoded in the checked charset (pieces of charsets.PIECE_BYTES), HTML made text.

        Linear in the body (at most max_bytes), but seconds at the 8 MiB cap: never on the event loop.
        """
        text = charsets.decode(self._body, self._charset, final=not self.truncated)
        if self._html:
            text = html_to_text(text)
        return RunbookResult(**{**dict(self), "text": text})


async def _readable(result: RunbookResult) -> RunbookResult:
    """The fetched runbook with its text, decoded and converted in a worker thread (the event loop stays free;
    the work is linear in at most max_bytes, and a thread cannot be interrupted, so no timeout applies)."""
    return await asyncio.to_thread(result.decoded) if isinstance(result, _Undecoded) else result


def _text_result(body: bytes, truncated: bool, content_type: str, name: str, kind: Kind) -> RunbookResult:
    """Check the type (a `_Failure` when it is no runbook) and choose the charset; the text comes in `_readable`.

    The charset is the server's only when it is on charsets.ALLOWED; any other (`punycode`, `utf-7`, a
    name Python does not know) is decoded as UTF-8 with U+FFFD for what is not UTF-8, and logged.
    """
    mime, _, params = content_type.partition(";")
    mime = mime.strip().lower()
    named = re.search(r"charset=\"?([\w.:-]{1,64})", params, re.IGNORECASE)
    charset = charsets.choose(named.group(1) if named else None)
    if named and charsets.allowed(named.group(1)) is None:
        log.warning("runbook %s: charset %r is not on the allow-list; decoded as UTF-8", name[:200], named.group(1))
    lowered = name.lower()
    if mime in _TEXT_TYPES:
        shown_type = mime
    elif mime in _HTML_TYPES:
        shown_type = "text/markdown"
    elif mime in _UNTYPED and lowered.endswith(TEXT_SUFFIXES) and b"\x00" not in body[:8192]:
        shown_type = "text/plain" if lowered.endswith(".txt") else "text/markdown"
    else:
        raise _Failure(
            "refused",
            f"content type {mime or '(none)'!r} is not a runbook: text/markdown, text/plain or text/html "
            "(or an untyped .md/.txt file)",
        )
    result = _Undecoded(
        status="ok",
        kind=kind,
        source="",
        content_type=shown_type,
        truncated=truncated,
        size_bytes=len(body),
    )
    result._body, result._charset, result._html = body, charset, mime in _HTML_TYPES
    return result


def _safe_relative(name: str) -> str:
    if not _BLOB_NAME.fullmatch(name) or any(part in ("", ".", "..") for part in name.split("/")):
        raise _Failure("refused", "a runbook name may hold letters, digits, '.', '_', '-' and '/' segments, no '..'")
    return name


async def _fetch_blob(name: str, config: RunbookSettings, blobs: BlobStore | None, workspace: str) -> RunbookResult:
    if blobs is None or not blobs.configured:
        raise _Failure("error", "Blob storage is not configured")
    if not workspace or "/" in workspace:
        raise _Failure("refused", "no workspace to read runbooks from")
    full = f"{workspace}/{_safe_relative(name)}"
    downloader = await blobs.open_download(full, offset=0, length=config.max_bytes + 1)
    if downloader is None:
        raise _Failure("not_found", "no such runbook in the workspace's storage")
    data: bytes = await downloader.readall()
    settings = getattr(downloader.properties, "content_settings", None)
    ctype = getattr(settings, "content_type", None) or ""
    return _text_result(data[: config.max_bytes], len(data) > config.max_bytes, ctype, name, "blob")


async def _fetch_folder(name: str, config: RunbookSettings) -> RunbookResult:
    if not config.catalogue_folder:
        raise _Failure("refused", "no runbook folder is configured")
    folder, relative = config.catalogue_folder, _safe_relative(name)

    def read() -> bytes | None:
        root = Path(folder).resolve()
        path = (root / relative).resolve()
        # resolve() follows symlinks, so a link out of the folder fails the containment check.
        if not path.is_relative_to(root) or not path.is_file() or not path.name.lower().endswith(TEXT_SUFFIXES):
            return None
        with path.open("rb") as f:
            return f.read(config.max_bytes + 1)

    data = await asyncio.to_thread(read)
    if data is None:
        raise _Failure("not_found", "no such runbook in the catalogue folder")
    return _text_result(data[: config.max_bytes], len(data) > config.max_bytes, "", relative, "catalogue")


async def _fetch_s3(url: str, config: RunbookSettings, guard: OutboundGuard) -> RunbookResult:
    match = _S3_URL.fullmatch(url)
    if match is None:
        raise _Failure("refused", "an S3 runbook is s3://<bucket>/<key> (bucket: 3-63 lowercase letters, digits, '.-')")
    bucket, key = match.groups()
    endpoint, key_id, secret = config.s3_endpoint_url, config.s3_access_key_id, config.s3_secret_access_key
    # Without the deployment's own endpoint and keys botocore would fall back to the worker's identity
    # (environment, profile, the container provider or the instance metadata service): refused before it runs.
    if not (endpoint and key_id and key_id.get_secret_value() and secret and secret.get_secret_value()):
        raise _Failure("refused", _S3_OFF)
    # The keys are the deployment's, whichever workspace names the bucket: like the GitHub token, they read only
    # the buckets the deployment lists (else any bucket they can read, and S3's NoSuchBucket/AccessDenied/NoSuchKey
    # answers about it, would be every workspace's). The refusal depends on the setting only.
    if bucket not in config.s3_buckets:
        raise _Failure("refused", _S3_UNLISTED)
    try:
        # botocore comes with the optional boto3 extra and has no type information: imported by name, only
        # when an S3 URL comes.
        botocore_session = importlib.import_module("botocore.session")
        botocore_config = importlib.import_module("botocore.config")
        botocore_credentials = importlib.import_module("botocore.credentials")
        botocore_errors = importlib.import_module("botocore.exceptions")
    except ImportError:
        raise _Failure("error", "S3 runbooks need the optional boto3 package, which is not installed") from None
    ClientError, BotoCoreError = botocore_errors.ClientError, botocore_errors.BotoCoreError
    await guard.resolve(endpoint, "s3_endpoint_url")
    timeout = config.timeout_seconds
    client_config = botocore_config.Config(
        connect_timeout=timeout,
        read_timeout=timeout,
        retries={"max_attempts": 1},
        # Path-style keeps the bucket out of the host name the guard checked.
        s3={"addressing_style": "path"},
        # `auto` (AWS_DEFAULTS_MODE or a config file) asks the instance metadata service for the region.
        defaults_mode="legacy",
        # No proxy from the environment (HTTPS_PROXY): the connection goes to the endpoint the guard checked.
        proxies={},
    )

    def get() -> tuple[bytes, str]:
        session = botocore_session.Session()
        # Explicit keys skip the credential chain; an empty resolver makes sure nothing can fall back to it
        # (IMDS included) without setting AWS_EC2_METADATA_DISABLED for the whole process.
        session.register_component("credential_provider", botocore_credentials.CredentialResolver(providers=[]))
        client = session.create_client(
            "s3",
            region_name=config.s3_region,
            endpoint_url=endpoint,
            aws_access_key_id=key_id.get_secret_value(),
            aws_secret_access_key=secret.get_secret_value(),
            config=client_config,
        )
        try:
            try:
                response = client.get_object(Bucket=bucket, Key=key, Range=f"bytes=0-{config.max_bytes}")
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") != "InvalidRange":
                    raise
                response = client.get_object(Bucket=bucket, Key=key)  # an empty object has no byte 0
            stream = response["Body"]
            try:
                data: bytes = stream.read(config.max_bytes + 1)
            finally:
                stream.close()
            return data, str(response.get("ContentType") or "")
        finally:
            client.close()

    try:
        data, ctype = await asyncio.to_thread(get)
    except ClientError as exc:
        code = str(exc.response.get("Error", {}).get("Code", ""))
        if code in ("NoSuchKey", "NoSuchBucket", "404"):
            raise _Failure("not_found", f"S3 answered {code}") from None
        raise _Failure("error", f"S3 answered {code or 'an error'}") from None
    except BotoCoreError as exc:
        raise _Failure("error", f"S3 request failed ({type(exc).__name__})") from None
    return _text_result(data[: config.max_bytes], len(data) > config.max_bytes, ctype, key, "s3")


# ---- catalogue -----------------------------------------------------------------------------------------


def parse_front_matter(text: str) -> dict[str, str | list[str]]:
    """The `key: value` pairs between the leading `---` lines; `[a, "b"]` and `- item` lines are lists."""
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    found: dict[str, str | list[str]] = {}
    current: str | None = None
    for line in lines[1:]:
        stripped = line.strip()
        if stripped in ("---", "..."):
            return found
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("- ") and current is not None:
            value = found.get(current)
            items = value if isinstance(value, list) else []
            items.append(_unquote(stripped[2:]))
            found[current] = items
            continue
        key, sep, value = stripped.partition(":")
        if not sep:
            continue
        current = key.strip().lower()
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            found[current] = [_unquote(v) for v in _split_list(value[1:-1])]
        else:
            found[current] = _unquote(value)
    return {}  # no closing line: not front matter


def _split_list(body: str) -> list[str]:
    return [raw.strip() for raw in re.findall(r"\"[^\"]*\"|'[^']*'|[^,]+", body) if raw.strip()]


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _ref(name: str, url: str, header: str) -> RunbookRef:
    meta = parse_front_matter(header)
    match = meta.get("match", [])
    title = meta.get("title")
    return RunbookRef(
        name=name,
        url=url,
        title=title if isinstance(title, str) else None,
        match=[match] if isinstance(match, str) and match else list(match) if isinstance(match, list) else [],
    )


async def load_catalogue(
    config: RunbookSettings, *, blobs: BlobStore | None = None, workspace: str | None = None
) -> Catalogue:
    """Read the front matter of each runbook in the workspace's blob prefix and the shared folder.

    At most `catalogue_max_files` per source and FRONT_MATTER_BYTES of each; a source that fails is an
    entry in `errors`, never an exception.
    """
    catalogue = Catalogue()
    limit = config.catalogue_max_files
    prefix = (config.catalogue_prefix or "").strip("/")
    if prefix and blobs is not None and blobs.configured and workspace and "/" not in workspace:
        try:
            names = sorted([n async for n in blobs.list(f"{workspace}/{prefix}/") if n.lower().endswith(TEXT_SUFFIXES)])
            catalogue.skipped += max(0, len(names) - limit)
            for blob_name in names[:limit]:
                downloader = await blobs.open_download(blob_name, offset=0, length=FRONT_MATTER_BYTES)
                if downloader is None:
                    continue
                header = (await downloader.readall()).decode("utf-8", "replace")
                relative = blob_name.removeprefix(f"{workspace}/")
                catalogue.entries.append(_ref(relative, f"blob:{relative}", header))
        except Exception as exc:  # a broken store must not stop the investigation
            catalogue.errors.append(f"blob catalogue: {type(exc).__name__}")
    if config.catalogue_folder:
        try:
            folder_entries, skipped = await asyncio.to_thread(_read_folder, Path(config.catalogue_folder), limit)
            catalogue.entries.extend(folder_entries)
            catalogue.skipped += skipped
        except OSError as exc:
            catalogue.errors.append(f"runbook folder: {type(exc).__name__}")
    return catalogue


def _read_folder(root: Path, limit: int) -> tuple[list[RunbookRef], int]:
    root = root.resolve()
    paths = sorted(
        p for p in root.rglob("*") if p.is_file() and p.name.lower().endswith(TEXT_SUFFIXES) and not p.is_symlink()
    )
    entries = []
    for path in paths[:limit]:
        relative = path.relative_to(root).as_posix()
        if not _BLOB_NAME.fullmatch(relative):
            continue
        with path.open("rb") as f:
            header = f.read(FRONT_MATTER_BYTES).decode("utf-8", "replace")
        entries.append(_ref(relative, f"catalogue:{relative}", header))
    return entries, max(0, len(paths) - limit)


def _literal_chars(pattern: str) -> int:
    return len(re.sub(r"[*?]|\[[^\]]*\]", "", pattern))


def _rule_score(rule: str, alert_name: str, labels: Mapping[str, str]) -> tuple[int, int] | None:
    """(conditions, literal characters) when every whitespace-separated condition of `rule` holds."""
    conditions = rule.split()
    if not conditions:
        return None
    literal = 0
    for condition in conditions:
        key, sep, pattern = condition.partition("=")
        if not sep:
            key, pattern = "alertname", condition
        key = key.strip().lower()
        value = alert_name if key == "alertname" and alert_name else labels.get(key)
        if value is None or not fnmatch.fnmatchcase(value.lower(), pattern.lower()):
            return None
        literal += _literal_chars(pattern)
    return len(conditions), literal


def _stem_key(name: str) -> str:
    stem = name.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return re.sub(r"[-_ ]", "", stem).lower()


def match_runbook(alert_name: str, labels: Mapping[str, str], catalogue: Catalogue) -> RunbookRef | None:
    """The most specific catalogue runbook for this alert, or None.

    Each `match` entry is one rule: whitespace-separated conditions that must all hold, each a glob on
    the alert name (`KubePod*`) or `label=glob` (`namespace=prod-*`; `alertname=` is the alert name).
    A runbook without rules matches when its file name is the alert name (`kube-pod-crash-looping.md`
    for KubePodCrashLooping). More conditions win, then more literal characters, then catalogue order.
    """
    lowered = {str(k).lower(): str(v) for k, v in labels.items()}
    name = alert_name or lowered.get("alertname", "")
    best: tuple[tuple[int, int, int], RunbookRef] | None = None
    for position, ref in enumerate(catalogue.entries):
        scores = [s for s in (_rule_score(rule, name, lowered) for rule in ref.match) if s is not None]
        if not ref.match and name and _stem_key(ref.name) == re.sub(r"[-_ ]", "", name).lower():
            scores.append((1, len(name)))
        if not scores:
            continue
        conditions, literal = max(scores)
        key = (conditions, literal, -position)
        if best is None or key > best[0]:
            best = (key, ref)
    return best[1] if best else None
