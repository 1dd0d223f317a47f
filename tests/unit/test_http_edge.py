"""The app's own HTTP edge without a host: body limits by declared length, Retry-After on a retryable error,
and a store outage recognised in what the SDKs raise."""

from __future__ import annotations

import azure.functions as func
import pytest
from azure.core.exceptions import HttpResponseError, ServiceRequestError, ServiceResponseError
from starlette.requests import Request

from functions.http import PayloadTooLarge, error_response, http_request_view, read_body, read_request_body
from shared.core.errors import ServiceUnavailable
from shared.storage.outage import store_outage


def _request(body: bytes, headers: dict[str, str]) -> func.HttpRequest:
    return func.HttpRequest(method="POST", url="http://127.0.0.1/api/x", headers=headers, body=body)


def test_a_declared_length_over_the_limit_is_refused_before_the_body_is_read() -> None:
    # Azure's host hands the worker any body up to 100 MB: the declared length is enough to refuse.
    with pytest.raises(PayloadTooLarge) as caught:
        read_body(_request(b"{}", {"content-length": str(4 * 1024 * 1024 + 1)}), 4 * 1024 * 1024)
    assert caught.value.http_status == 413
    assert caught.value.details == {"limit_bytes": 4 * 1024 * 1024}


@pytest.mark.parametrize("declared", ["2", "", "abc", "-1", "\u0663"])
def test_a_small_or_unreadable_declared_length_falls_back_to_the_real_size(declared: str) -> None:
    assert read_body(_request(b"{}", {"content-length": declared}), 10) == b"{}"
    with pytest.raises(PayloadTooLarge):
        read_body(_request(b"x" * 11, {"content-length": declared}), 10)


def test_a_retryable_error_carries_retry_after() -> None:
    r = error_response(ServiceUnavailable("down", retry_after_seconds=7), "c1")
    assert r.status_code == 503
    assert r.headers["Retry-After"] == "7"


def _raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:
        return caught


@pytest.mark.parametrize(
    "exc",
    [
        ServiceRequestError("Cannot connect to host"),
        ServiceResponseError("Timeout on reading data from socket"),
        HttpResponseError("busy", response=None),
    ],
)
def test_store_outages_are_retryable(exc: BaseException) -> None:
    if isinstance(exc, HttpResponseError):
        exc.status_code = 503
    outage = store_outage(_raised(exc))
    assert outage is not None
    assert outage.http_status == 503
    assert outage.details["retryable"] is True
    assert outage.retry_after_seconds == outage.details["retry_after_seconds"] > 0


def test_an_outage_is_found_behind_what_wrapped_it() -> None:
    outer = RuntimeError("the store call failed")
    outer.__cause__ = _raised(ServiceRequestError("refused"))
    assert store_outage(_raised(outer)) is not None


@pytest.mark.parametrize("status", [400, 404, 409, 412, 500])
def test_other_store_answers_are_not_outages(status: int) -> None:
    exc = HttpResponseError("no", response=None)
    exc.status_code = status
    assert store_outage(_raised(exc)) is None
    assert store_outage(_raised(ValueError("bug"))) is None


def test_a_throttled_store_says_when_to_retry() -> None:
    from azure.cosmos.exceptions import CosmosHttpResponseError

    exc = CosmosHttpResponseError(status_code=429, message="Request rate is large")
    exc.headers = {"x-ms-retry-after-ms": "2500"}
    outage = store_outage(_raised(exc))
    assert outage is not None
    assert outage.retry_after_seconds == 3


def test_an_answer_lost_after_the_request_was_sent_does_not_claim_nothing_changed() -> None:
    sent = store_outage(_raised(ServiceResponseError("Timeout on reading data from socket")))
    never_sent = store_outage(_raised(ServiceRequestError("Cannot connect to host")))
    assert sent is not None
    assert never_sent is not None
    assert sent.details["may_have_applied"] is True
    assert "may or may not" in sent.message
    assert never_sent.details["may_have_applied"] is False
    assert "nothing was changed" in never_sent.message


def _streamed_request(chunks: list[bytes], headers: dict[str, str]) -> tuple[Request, list[int]]:
    """A starlette Request (what the worker's HTTP streams hand over) whose body arrives in `chunks`;
    the list returned counts the chunks the edge pulled."""
    pulled: list[int] = []

    async def receive() -> dict:
        pulled.append(1)
        i = len(pulled) - 1
        if i < len(chunks):
            return {"type": "http.request", "body": chunks[i], "more_body": i < len(chunks) - 1}
        return {"type": "http.disconnect"}

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/api/x",
        "query_string": b"",
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
    }
    return Request(scope, receive), pulled


async def test_a_streamed_body_over_the_limit_stops_being_read_at_the_limit() -> None:
    request, pulled = _streamed_request([b"x" * 8] * 1000, {})  # chunked: no declared length
    with pytest.raises(PayloadTooLarge):
        await read_request_body(request, 20)
    assert len(pulled) == 3  # 24 bytes > 20: the other 997 chunks are never read


async def test_a_declared_length_over_the_limit_reads_nothing() -> None:
    request, pulled = _streamed_request([b"x" * 8], {"content-length": "21"})
    with pytest.raises(PayloadTooLarge):
        await read_request_body(request, 20)
    assert pulled == []


async def test_the_handlers_view_has_the_body_headers_query_and_route_parameters() -> None:
    request, _ = _streamed_request([b'{"a":', b"1}"], {"X-One": "1", "content-type": "application/json"})
    request.scope["query_string"] = b"q=2"
    request.scope["path_params"] = {"name": "tool.x"}
    view = http_request_view(request, await read_request_body(request, 100))
    assert view.get_json() == {"a": 1}
    assert view.headers["x-one"] == "1"
    assert view.params["q"] == "2"
    assert view.route_params == {"name": "tool.x"}
    assert view.method == "POST"
