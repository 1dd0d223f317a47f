"""The only code that talks to NeuBird: login, the v1 routes, opening the prompt stream, resilience.

Its parts live beside it: the account and the token cache in tokens.py, reading an open prompt stream in
prompt_stream.py (parsing its events in stream.py).

Every request goes through the outbound guard (`GuardedTransport`: the URL is checked and the checked address is
connected to), carries a timeout (the prompt stream: an idle timeout between bytes instead of a total), and has
its body capped at `ClientLimits.max_response_bytes`.

Auth (contract section 3): `POST /v1/user/login` with email and password answers `access_token` (or `token`); a
2xx whose body has `error` / `error_message` is a refused login. The token goes into the process-wide
`TokenCache` (how long it is kept: tokens.py), and one login at a time per (base URL, email) fills it. On
a 401 from any call the token is dropped, the client logs in once more and retries once; a second 401 or a
refused login is UPSTREAM_ERROR with details.type "authentication".

Resilience [GAP: NeuBird documents no rate limits; chosen here]: 429, 5xx, connection errors and timeouts are
retried with exponential backoff and full jitter (1 s, 2 s, 4 s ... capped by `max_retry_wait_s`) up to
`max_attempts` attempts, a Retry-After (seconds or an HTTP date) replacing the backoff (also capped). Exhausted:
RATE_LIMITED (details.retry_after_seconds) after a 429, else UPSTREAM_ERROR type "api". A POST that creates
something is never retried once the server has answered 2xx (a lost body is an error, not a second session).
The prompt POST is retried on 429/5xx, and after a connection error or timeout only when the request surely never
left (no connection made): a prompt NeuBird may have taken is not sent twice (a second investigation).

Envelope errors (a 2xx with `response.error_code` != 0): [INF] a message with "not found" / "does not exist" is
NOT_FOUND, type "api" when it names a project, else "investigation"; other codes are UPSTREAM_ERROR type "api".

Secrets: the password and tokens never appear in an exception text, a log line or a repr; upstream error texts
are cut, scrubbed of both and redacted before they are quoted.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import random
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import Any
from urllib.parse import quote

import httpx2

from shared.core.errors import AppError, NotFound, RateLimited, UpstreamError
from shared.core.guarded_http import GuardedTransport, ResponseTooLarge
from shared.core.outbound import OutboundGuard
from shared.core.redaction import REDACTED, redact_text
from shared.neubird.errors import QUOTED_CHARS, ErrorKind, neubird_error
from shared.neubird.prompt_stream import PromptStream
from shared.neubird.settings import NeubirdSettings
from shared.neubird.stream import MAX_LINE_BYTES
from shared.neubird.tokens import CachedToken, Credentials, TokenCache, token_expiry

log = logging.getLogger("firebreak.neubird.client")

CLIENT_IDENTIFIER = "firebreak"
_BACKOFF_BASE_S = 1.0
# What a NeuBird id (session, project, organization) must look like before it goes into a URL, a request or a
# stored plan: ids are opaque (24-hex sessions, RFC-4122 projects); these characters keep them path-safe.
ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}"
_ID = re.compile(ID_PATTERN)


def looks_like_id(value: object) -> bool:
    return isinstance(value, str) and _ID.fullmatch(value) is not None


_TOKEN = re.compile(r"[\x21-\x7e]{1,8192}")
_AUTH_RECOVERY = [
    "Check NEUBIRD_EMAIL and NEUBIRD_PASSWORD: NeuBird refused the account's login.",
    "Check NEUBIRD_BASE_URL: it must be the instance's API base, ending in /api (e.g. https://acme.app.neubird.ai/api).",
]
_RETRY_RECOVERY = ["NeuBird is busy or unreachable; try again in a minute."]


# --- limits ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ClientLimits:
    timeout_s: float = 30.0
    max_attempts: int = 4
    max_retry_wait_s: float = 20.0
    login_timeout_s: float = 30.0
    max_response_bytes: int = 16 * 1024 * 1024
    stream_idle_s: float = 60.0
    max_line_bytes: int = MAX_LINE_BYTES

    @classmethod
    def from_settings(cls, settings: NeubirdSettings) -> ClientLimits:
        return cls(
            timeout_s=settings.request_timeout_seconds,
            max_attempts=settings.max_attempts,
            max_retry_wait_s=settings.max_retry_wait_seconds,
            max_response_bytes=settings.max_response_bytes,
            stream_idle_s=settings.stream_idle_seconds,
        )


# --- the prompt stream -----------------------------------------------------------------------------------------

# --- the client ------------------------------------------------------------------------------------------------


# Kept-alive connections for the pool `http_client` makes; [GAP] NeuBird's idle timeout is not documented, and a
# connection the server closed meanwhile is noticed before reuse (the pool checks it) or retried as a connection error.
KEEPALIVE_EXPIRY_S = 30.0


def http_client(
    guard: OutboundGuard, max_response_bytes: int, url_field: str = "NEUBIRD_BASE_URL"
) -> httpx2.AsyncClient:
    """An HTTP client whose every request goes through the outbound guard, bodies capped, no proxy, no redirects.

    Share one per process (connection.Runtime does): each tool call then reuses a kept-alive connection instead
    of paying a TCP and TLS handshake with NeuBird. Every request sets its own timeout.
    """
    limits = httpx2.Limits(max_connections=50, max_keepalive_connections=10, keepalive_expiry=KEEPALIVE_EXPIRY_S)
    return httpx2.AsyncClient(
        transport=GuardedTransport(guard, url_field, max_response_bytes=max_response_bytes, limits=limits),
        trust_env=False,  # no proxy from the environment: the checked address is the one connected to
        follow_redirects=False,
    )


class _Retry(Exception):
    """An attempt failed in a way another attempt may fix (429, 5xx, connection error, timeout)."""

    def __init__(self, reason: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason, self.status, self.retry_after = reason, status, retry_after


class _Unauthorized(Exception):
    pass


@dataclass(frozen=True)
class _Answer:
    status: int
    headers: httpx2.Headers
    body: bytes


class NeubirdClient:
    """One NeuBird instance (`base_url`: the API base, ending in /api) and one account. Use `async with`."""

    def __init__(
        self,
        base_url: str,
        credentials: Credentials,
        *,
        guard: OutboundGuard,
        tokens: TokenCache,
        limits: ClientLimits,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: Callable[[], float] = random.random,
        on_call: Callable[[str], None] | None = None,
        url_field: str = "NEUBIRD_BASE_URL",
        http: httpx2.AsyncClient | None = None,
    ) -> None:
        """`http`: a shared connection pool from `http_client` (kept open by its owner); else the client owns one."""
        self.base_url = base_url.rstrip("/")
        self._credentials, self._tokens, self.limits = credentials, tokens, limits
        self._clock, self._sleep, self._rng, self._on_call = clock, sleep, rng, on_call
        self._seen_tokens: list[str] = []
        self._owns_http = http is None
        self._http = http if http is not None else http_client(guard, limits.max_response_bytes, url_field)
        self._guard, self._url_field = guard, url_field

    def __repr__(self) -> str:
        return f"NeubirdClient(base_url={self.base_url!r})"

    async def __aenter__(self) -> NeubirdClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    # -- secrets --

    def _scrub(self, text: str) -> str:
        secrets = [self._credentials.password.get_secret_value(), *self._seen_tokens]
        for secret in sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True):
            text = text.replace(secret, REDACTED)
        return redact_text(text)

    def _quote(self, body: bytes | str) -> str:
        text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
        return self._scrub(" ".join(text.split())[: QUOTED_CHARS * 2])[:QUOTED_CHARS]

    # -- auth --

    async def login(self, *, refused: str | None = None) -> str:
        """A valid token: the cached one (unless it is `refused`, the token NeuBird just answered 401 to), else a
        fresh login. One login at a time per (base URL, email) across every client sharing the token cache: the
        others wait and take the token it got."""
        if (cached := self._cached()) is not None and cached.token != refused:
            return cached.token
        async with self._tokens.login_lock(self.base_url, self._credentials.email):
            if (cached := self._cached()) is not None and cached.token != refused:
                return cached.token
            return await self._login()

    def _cached(self) -> CachedToken | None:
        return self._tokens.get(self.base_url, self._credentials.email, self._clock())

    async def _login(self) -> str:
        body = {"email": self._credentials.email, "password": self._credentials.password.get_secret_value()}
        try:
            data = await self._call("login", "POST", "/v1/user/login", json_body=body, auth=False)
        except _Unauthorized:
            raise self._auth_error("NeuBird refused the login (HTTP 401)") from None
        except AppError as exc:
            if exc.details.get("status") in (400, 403, 404, 405):  # 404/405: most often a base URL without /api
                raise self._auth_error(f"NeuBird refused the login: {exc.message}") from None
            raise
        if not isinstance(data, Mapping):
            raise self._auth_error("NeuBird's login answer is not a JSON object")
        for key in ("error", "error_message"):
            if isinstance(data.get(key), str) and data[key].strip():
                raise self._auth_error(f"NeuBird refused the login: {self._quote(data[key])}")
        token = data.get("access_token") or data.get("token")
        if not isinstance(token, str) or not token.strip():
            raise self._auth_error("NeuBird's login answer has no access_token")
        if not _TOKEN.fullmatch(token):
            # Never cached: a token no header can carry would break every call of every caller until it expired.
            raise self._auth_error("NeuBird's login answer has a token that is not printable ASCII")
        self._seen_tokens.append(token)
        org = data.get("org_uuid") if isinstance(data.get("org_uuid"), str) and data.get("org_uuid") else None
        entry = CachedToken(token, token_expiry(token, self._clock()), org_uuid=org, org_known=org is not None)
        self._tokens.put(self.base_url, self._credentials.email, entry)
        log.info("NeuBird login to %s succeeded", self.base_url)
        return token

    def _auth_error(self, message: str) -> AppError:
        return neubird_error(UpstreamError, "authentication", message, recovery=list(_AUTH_RECOVERY))

    async def organization_uuid(self) -> str | None:
        """The account's organization (`GET /v1/user`, specs[0].org_uuid), cached with the token; None if unknown."""
        token = await self.login()
        cached = self._cached()
        if cached is not None and cached.token == token and cached.org_known:
            return cached.org_uuid
        data = await self._request("user", "GET", "/v1/user")
        specs = data.get("specs") if isinstance(data, Mapping) else None
        first = specs[0] if isinstance(specs, list) and specs and isinstance(specs[0], Mapping) else {}
        org = first.get("org_uuid") if isinstance(first.get("org_uuid"), str) and first.get("org_uuid") else None
        if (cached := self._cached()) is not None:
            self._tokens.set_org(self.base_url, self._credentials.email, cached.token, org)
        return org

    # -- routes --

    async def list_projects(self) -> list[dict[str, Any]]:
        data = await self._request("projects", "GET", "/v1/project")
        return _dicts(data.get("specs") if isinstance(data, Mapping) else None)

    async def new_session(self, project_uuid: str, organization_uuid: str | None) -> str:
        body = {
            **self._envelope(organization_uuid),
            "project_uuid": project_uuid,
            "gendb_spec": {"uuid": str(uuid.uuid4())},
        }
        data = await self._request("new_session", "POST", "/v1/inference/new_session", json_body=body, creates=True)
        return self._session_uuid(data, "new_session")

    async def session_from_alert(self, project_uuid: str, organization_uuid: str | None, alert_id: str) -> str:
        body = {**self._envelope(organization_uuid), "project_uuid": project_uuid, "alert_id": alert_id}
        data = await self._request(
            "session_from_alert", "POST", "/v1/inference/session:create", json_body=body, creates=True
        )
        return self._session_uuid(data, "session_from_alert")

    async def list_sessions(
        self,
        project_uuid: str,
        organization_uuid: str | None,
        *,
        start: int,
        limit: int,
        filters: Sequence[Mapping[str, Any]] = (),
    ) -> list[dict[str, Any]]:
        body = {
            **self._envelope(organization_uuid),
            "project_uuid": project_uuid,
            "pagination": {"start": start, "limit": limit},
            "filters": [dict(f) for f in filters],
        }
        data = await self._request("session_list", "POST", "/v1/inference/session/list", json_body=body)
        return _dicts(data.get("sessions") if isinstance(data, Mapping) else None)

    async def inspect(self, session_uuid: str, project_uuid: str, organization_uuid: str | None) -> dict[str, Any]:
        body = {
            **self._envelope(organization_uuid),
            "project_uuid": project_uuid,
            "session_uuid": session_uuid,
            "pagination": {"start": 0, "limit": 50},
        }
        return as_object(await self._request("inspect", "POST", "/v1/inference/session/inspect", json_body=body))

    async def session_summary(self, session_uuid: str, project_uuid: str) -> dict[str, Any]:
        path = f"/v1/inference/session/summary/{quote(session_uuid, safe='')}"
        return as_object(await self._request("session_summary", "GET", path, params=[("project_uuid", project_uuid)]))

    async def session_report(self, session_uuids: Sequence[str], project_uuid: str) -> list[dict[str, Any]]:
        params = [("session_uuids", u) for u in session_uuids] + [("project_uuid", project_uuid)]
        data = await self._request("session_report", "GET", "/v1/inference/session_report", params=params)
        if not isinstance(data, list):
            raise self._api_error("session_report", "NeuBird's session report is not a JSON array")
        return _dicts(data)

    async def incident_report(self) -> dict[str, Any]:
        return as_object(await self._request("incident_report", "GET", "/v1/inference/incident_report"))

    def prompt(self, session_uuid: str, project_uuid: str, text: str) -> AbstractAsyncContextManager[PromptStream]:
        """Send a prompt; `async with client.prompt(...) as stream: async for event in stream: ...`.

        Opening retries (401 re-login, 429/5xx, connection errors, timeouts) happen only before the stream began
        (no 200 yet); errors then raise. Once it began, nothing raises: see `PromptStream.outcome` / `.error`.
        """
        body = {
            "request": {"client_identifier": CLIENT_IDENTIFIER},
            "action": "ACTION_NEXT",
            "session_uuid": session_uuid,
            "project_uuid": project_uuid,
            "messages": [{"content": {"content_type": "CONTENT_TYPE_CHAT_PROMPT", "parts": [text]}}],
        }
        return self._prompt(body)

    @asynccontextmanager
    async def _prompt(self, body: dict[str, Any]) -> AsyncIterator[PromptStream]:
        # A stream holds its connection for minutes: it gets a connection of its own, never one of the shared
        # pool's, so waiting callers cannot starve every other NeuBird call of the worker.
        async with http_client(self._guard, self.limits.max_response_bytes, self._url_field) as own:
            response = await self._with_retries("prompt", lambda token: self._open_stream(own, body, token))
            try:
                yield PromptStream(
                    response,
                    self._scrub,
                    idle_s=self.limits.stream_idle_s,
                    max_line_bytes=self.limits.max_line_bytes,
                )
            finally:
                await response.aclose()

    async def _open_stream(self, http: httpx2.AsyncClient, body: dict[str, Any], token: str | None) -> httpx2.Response:
        limits = self.limits
        timeout = httpx2.Timeout(
            limits.timeout_s, read=limits.stream_idle_s, connect=limits.timeout_s, pool=limits.timeout_s
        )
        request = http.build_request(
            "POST",
            self.base_url + "/v1/inference/session",
            json=body,
            headers={**self._headers(token), "Accept": "text/event-stream"},
            timeout=timeout,
        )
        self._count("prompt")
        try:
            # The whole opening (connect, headers) within one timeout: a server trickling its headers byte by
            # byte must not hold the call past it.
            async with asyncio.timeout(limits.timeout_s):
                response = await http.send(request, stream=True)
        except (TimeoutError, httpx2.TimeoutException, httpx2.TransportError) as exc:
            if not _never_sent(exc):
                raise self._unsure("prompt", exc) from None
            raise self._retry_for(exc) from None
        except ResponseTooLarge as exc:
            raise self._api_error("prompt", f"NeuBird's answer passed {exc.limit} bytes") from None
        if response.status_code == 200 and not _is_json(response):
            if not _identity(response):
                await response.aclose()
                raise self._api_error("prompt", "NeuBird's stream came compressed though identity was asked")
            return response
        try:
            answer = _Answer(response.status_code, response.headers, await self._raw_body("prompt", response))
        except (httpx2.TimeoutException, httpx2.TransportError) as exc:
            raise self._retry_for(exc) from None
        except ResponseTooLarge as exc:
            raise self._api_error("prompt", f"NeuBird's answer passed {exc.limit} bytes") from None
        finally:
            await response.aclose()
        data = self._judge("prompt", answer)
        self._check_envelope("prompt", data)
        raise self._api_error("prompt", "NeuBird answered the prompt with JSON instead of an event stream")

    # -- the request machinery --

    def _envelope(self, organization_uuid: str | None) -> dict[str, Any]:
        request: dict[str, Any] = {"client_identifier": CLIENT_IDENTIFIER}
        body: dict[str, Any] = {"request": request}
        if organization_uuid:
            request["uuid"] = organization_uuid
            body["organization_uuid"] = organization_uuid
        return body

    def _session_uuid(self, data: Any, route: str) -> str:
        value = data.get("session_uuid") if isinstance(data, Mapping) else None
        if not isinstance(value, str) or not _ID.fullmatch(value):
            # It goes back into URLs and into answers an agent acts on: only an id-shaped value is taken.
            raise self._api_error(route, f"NeuBird's {route} answer has no usable session_uuid")
        return value

    def _headers(self, token: str | None) -> dict[str, str]:
        # identity: a compressed answer is refused (_raw_body), so no gzip bomb can pass the byte cap.
        headers = {"Accept": "application/json", "Accept-Encoding": "identity"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return headers

    def _count(self, route: str) -> None:
        if self._on_call is not None:
            self._on_call(route)

    async def _request(
        self,
        route: str,
        method: str,
        path: str,
        *,
        json_body: dict[str, Any] | None = None,
        params: list[tuple[str, str]] | None = None,
        creates: bool = False,
    ) -> Any:
        data = await self._with_retries(
            route, lambda token: self._attempt(route, method, path, token, json_body, params, creates)
        )
        self._check_envelope(route, data)
        return data

    async def _call(
        self,
        route: str,
        method: str,
        path: str,
        *,
        json_body: dict[str, Any] | None = None,
        auth: bool = True,
    ) -> Any:
        """One logical call without the 401 re-login (login itself): retries on 429/5xx/connection/timeouts."""

        async def attempt(_: str | None) -> Any:
            return await self._attempt(route, method, path, None, json_body, None, False, auth=auth)

        return await self._retrying(route, attempt, None)

    async def _with_retries(self, route: str, attempt: Callable[[str | None], Awaitable[Any]]) -> Any:
        """`attempt(token)` with a token, re-logging in once on a 401, retrying 429/5xx/connection/timeouts."""
        token = await self.login()
        try:
            return await self._retrying(route, attempt, token)
        except _Unauthorized:
            pass
        self._tokens.drop(self.base_url, self._credentials.email, token)
        log.info("NeuBird %s: HTTP 401, logging in again", route)
        token = await self.login(refused=token)
        try:
            return await self._retrying(route, attempt, token)
        except _Unauthorized:
            self._tokens.drop(self.base_url, self._credentials.email, token)
            raise self._auth_error(f"NeuBird refused the token of a fresh login (HTTP 401 on {route} twice)") from None

    async def _retrying(self, route: str, attempt: Callable[[str | None], Awaitable[Any]], token: str | None) -> Any:
        limits = self.limits
        for number in range(1, limits.max_attempts + 1):
            try:
                return await attempt(token)
            except _Retry as retry:
                if number >= limits.max_attempts:
                    raise self._exhausted(route, retry, number) from None
                wait = self._backoff(number, retry.retry_after)
                log.warning(
                    "NeuBird %s: %s; attempt %d of %d, next in %.2f s",
                    route,
                    retry.reason,
                    number,
                    limits.max_attempts,
                    wait,
                )
                await self._sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        cap = self.limits.max_retry_wait_s
        if retry_after is not None:
            return min(max(retry_after, 0.0), cap)
        return self._rng() * min(cap, _BACKOFF_BASE_S * 2.0 ** (attempt - 1))

    def _exhausted(self, route: str, retry: _Retry, attempts: int) -> AppError:
        if retry.status == 429:
            after = retry.retry_after if retry.retry_after is not None else self.limits.max_retry_wait_s
            return neubird_error(
                RateLimited,
                "api",
                f"NeuBird kept answering HTTP 429 (too many requests) to {route} after {attempts} attempts",
                details={"route": route, "attempts": attempts, "retry_after_seconds": math.ceil(after)},
                recovery=[f"Wait {math.ceil(after)} s and call again."],
            )
        return neubird_error(
            UpstreamError,
            "api",
            f"NeuBird {route} failed after {attempts} attempts: {retry.reason}",
            details={"route": route, "attempts": attempts, **({"status": retry.status} if retry.status else {})},
            recovery=list(_RETRY_RECOVERY),
        )

    def _unsure(self, route: str, exc: Exception) -> AppError:
        """A prompt that may have reached NeuBird without an answer: not retried, since a second one would start
        the investigation twice."""
        what = "no answer in time" if isinstance(exc, httpx2.TimeoutException | TimeoutError) else "connection lost"
        return neubird_error(
            UpstreamError,
            "api",
            f"NeuBird {route}: {what} ({self._scrub(type(exc).__name__)}) after the request was sent; not retried, "
            "so the investigation is not started twice",
            details={"route": route},
            recovery=[
                "NeuBird may have taken it: check with neubird_get_investigation_status before asking again.",
                *_RETRY_RECOVERY,
            ],
        )

    def _retry_for(self, exc: Exception) -> _Retry:
        if isinstance(exc, httpx2.TimeoutException | TimeoutError):
            return _Retry("no answer in time")
        return _Retry(f"could not reach NeuBird ({self._scrub(type(exc).__name__)})")

    async def _attempt(
        self,
        route: str,
        method: str,
        path: str,
        token: str | None,
        json_body: dict[str, Any] | None,
        params: list[tuple[str, str]] | None,
        creates: bool,
        *,
        auth: bool = True,
    ) -> Any:
        timeout = self.limits.timeout_s if auth else self.limits.login_timeout_s
        request = self._http.build_request(
            method,
            self.base_url + path,
            json=json_body,
            params=tuple(params) if params else None,
            headers=self._headers(token if auth else None),
            timeout=httpx2.Timeout(timeout),
        )
        self._count(route)
        accepted = False
        try:
            async with asyncio.timeout(timeout):
                response = await self._http.send(request, stream=True)
                try:
                    accepted = 200 <= response.status_code < 300
                    answer = _Answer(response.status_code, response.headers, await self._raw_body(route, response))
                finally:
                    await response.aclose()
        except (TimeoutError, httpx2.TimeoutException, httpx2.TransportError) as exc:
            if creates and accepted:
                raise self._api_error(
                    route,
                    f"NeuBird accepted {route} but its answer was lost ({type(exc).__name__}); not retried, "
                    "so no second session is created",
                ) from None
            raise self._retry_for(exc) from None
        except ResponseTooLarge as exc:
            raise self._api_error(route, f"NeuBird's answer passed {exc.limit} bytes") from None
        return self._judge(route, answer)

    async def _raw_body(self, route: str, response: httpx2.Response) -> bytes:
        """The body as sent (capped by the transport); a compressed one is refused, never inflated."""
        if not _identity(response):
            raise self._api_error(route, "NeuBird's answer came compressed though identity was asked")
        return b"".join([chunk async for chunk in response.aiter_raw()])

    def _judge(self, route: str, answer: _Answer) -> Any:
        status = answer.status
        if status == 401:
            raise _Unauthorized()
        if status == 429 or status >= 500:
            raise _Retry(
                f"HTTP {status}",
                status=status,
                retry_after=_retry_after(answer.headers.get("retry-after"), self._clock),
            )
        if not 200 <= status < 300:
            text = self._quote(answer.body)
            if status == 404:
                raise self._not_found(route, f"NeuBird {route}: HTTP 404 {text}".strip(), {"status": status})
            raise neubird_error(
                UpstreamError,
                "api",
                f"NeuBird {route} failed: HTTP {status} {text}".strip(),
                details={"route": route, "status": status},
            )
        try:
            return json.loads(answer.body) if answer.body.strip() else {}
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser's stack
            raise self._api_error(route, f"NeuBird's {route} answer is not JSON") from None

    def _check_envelope(self, route: str, data: Any) -> None:
        envelope = data.get("response") if isinstance(data, Mapping) else None
        if not isinstance(envelope, Mapping):
            return
        code = envelope.get("error_code")
        if code in (None, 0, "0", "", False):
            return
        message = self._quote(str(envelope.get("error_message") or "")) or "no message"
        text = f"NeuBird {route} failed: {message} (error_code {self._quote(str(code))})"
        lowered = message.lower()
        if "not found" in lowered or "does not exist" in lowered:
            raise self._not_found(route, text, {"upstream_error_code": code})
        raise neubird_error(UpstreamError, "api", text, details={"route": route, "upstream_error_code": code})

    def _not_found(self, route: str, message: str, details: dict[str, Any]) -> AppError:
        kind: ErrorKind = "api" if route == "projects" or "project" in message.lower() else "investigation"
        recovery = (
            ["List the projects with neubird_list_projects and pass an existing project_uuid."]
            if kind == "api"
            else ["Check the session_uuid (neubird_list_sessions lists them) and its project_uuid."]
        )
        return neubird_error(NotFound, kind, message, details={"route": route, **details}, recovery=recovery)

    def _api_error(self, route: str, message: str) -> AppError:
        return neubird_error(UpstreamError, "api", message, details={"route": route})


def _never_sent(exc: Exception) -> bool:
    """Whether the request surely never reached NeuBird (no connection made): only then is the prompt retried."""
    return isinstance(exc, httpx2.ConnectError | httpx2.ConnectTimeout | httpx2.PoolTimeout)


def _retry_after(value: str | None, clock: Callable[[], float]) -> float | None:
    """Seconds to wait from a Retry-After header: a number of seconds or an HTTP date (None when absent/garbled)."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(value).timestamp() - clock()
        except (TypeError, ValueError, IndexError):
            return None
    return max(seconds, 0.0) if math.isfinite(seconds) else None


def _is_json(response: httpx2.Response) -> bool:
    return response.headers.get("content-type", "").split(";")[0].strip().lower() == "application/json"


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [dict(v) for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _identity(response: httpx2.Response) -> bool:
    return response.headers.get("content-encoding", "identity").strip().lower() in ("", "identity")


def as_object(value: Any) -> dict[str, Any]:
    """`value` when NeuBird sent an object there, else {} (fields may be missing or of another shape)."""
    return dict(value) if isinstance(value, Mapping) else {}


__all__ = ["ClientLimits", "NeubirdClient", "http_client"]
