"""The bounded multipart parser: exact bytes back, and every limit refused while parsing, before the rest is read."""

from __future__ import annotations

import azure.functions as func
import pytest

from shared.perf.uploads.multipart import MAX_PART_HEADER_BYTES, MAX_PARTS, MultipartError, parse_multipart

CT = "multipart/form-data; boundary=XyZ"


def part(name: str, data: bytes, filename: str | None = None, extra: bytes = b"") -> bytes:
    disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
    return b"--XyZ\r\nContent-Disposition: " + disposition.encode() + b"\r\n" + extra + b"\r\n" + data + b"\r\n"


END = b"--XyZ--\r\n"


def test_parts_come_back_byte_for_byte() -> None:
    tricky = b"line\r\n--XyZ-not-a-boundary\r\n\r\n\x00\xff" + b"\r" * 5000 + b"\n--Xy"
    body = part("file", tricky, "a.log", b"Content-Type: application/octet-stream\r\n") + part("note", b"hello") + END
    parts = parse_multipart(body, CT)
    assert [(p.name, p.filename, p.data) for p in parts] == [("file", "a.log", tricky), ("note", None, b"hello")]


def test_too_many_parts_stops_the_parse_at_the_first_part_over() -> None:
    """200,000 empty parts: refused at part 21. What follows is not even valid multipart; it is never read."""
    body = part("a", b"") * (MAX_PARTS + 1) + b"\xff garbage that is no multipart at all " * 50_000
    with pytest.raises(MultipartError) as caught:
        parse_multipart(body, CT)
    assert caught.value.problem == "too many parts"
    with pytest.raises(MultipartError, match="at most 20 parts"):
        parse_multipart(part("a", b"") * 200_000 + END, CT)


def test_exactly_the_limit_is_accepted() -> None:
    assert len(parse_multipart(part("f", b"x", "f.log") * MAX_PARTS + END, CT)) == MAX_PARTS


def test_header_bytes_are_capped_while_parsing() -> None:
    big = b"X-Pad: " + b"a" * (MAX_PART_HEADER_BYTES + 10) + b"\r\n"
    with pytest.raises(MultipartError) as caught:
        parse_multipart(part("f", b"x", "f.log", big) + END, CT)
    assert caught.value.problem == "part headers too large"
    # Headers that never end (no blank line): refused once the buffer passes the cap, not at the end of the body.
    endless = b'--XyZ\r\nContent-Disposition: form-data; name="f"\r\nX-Pad: ' + b"a" * 10_000_000
    with pytest.raises(MultipartError) as caught:
        parse_multipart(endless, CT)
    assert caught.value.problem == "part headers too large"


def test_total_bytes_are_capped() -> None:
    with pytest.raises(MultipartError) as caught:
        parse_multipart(part("f", b"x" * 5000, "f.log") + END, CT, max_total_bytes=4096)
    assert caught.value.problem == "too large"


@pytest.mark.parametrize(
    ("body", "content_type", "problem"),
    [
        (b"garbage", CT, "truncated"),
        (part("f", b"x", "f.log"), CT, "truncated"),
        (b"--XyZ\r\nX-No-Disposition: 1\r\n\r\nx\r\n" + END, CT, "malformed"),
        (b'--XyZ\r\nContent-Disposition: form-data; name="\xff"\r\n\r\nx\r\n' + END, CT, "malformed"),
        (END, CT, "no parts"),
        (part("f", b"x", "f.log") + END, "multipart/form-data; boundary=", "no boundary"),
        (part("f", b"x", "f.log") + END, "multipart/form-data", "no boundary"),
    ],
)
def test_malformed_bodies_are_clear_errors(body: bytes, content_type: str, problem: str) -> None:
    with pytest.raises(MultipartError) as caught:
        parse_multipart(body, content_type)
    assert caught.value.problem == problem


def _functions_request(body: bytes) -> func.HttpRequest:
    return func.HttpRequest("POST", "http://localhost/api/artifacts", headers={"Content-Type": CT}, body=body)


def test_the_functions_library_form_parsing_keeps_none_of_these_bounds() -> None:
    """Why POST /api/artifacts does not read `req.files`: azure-functions builds werkzeug's FormDataParser with
    max_form_memory_size=None, max_content_length=None and no max_form_parts (azure/functions/_http.py,
    HttpRequest._parse_form_data), and offers no way to pass limits. If a release adds them, this test fails:
    then move the route to `req.files` with the limits below."""
    too_many = part("f", b"x", "f.log") * (MAX_PARTS * 10) + END
    assert len(_functions_request(too_many).files.getlist("f")) == MAX_PARTS * 10
    with pytest.raises(MultipartError, match="at most 20 parts"):
        parse_multipart(too_many, CT)

    padded = part("f", b"x", "f.log", b"X-Pad: " + b"a" * (MAX_PART_HEADER_BYTES * 100) + b"\r\n") + END
    assert _functions_request(padded).files["f"].read() == b"x"
    with pytest.raises(MultipartError, match="headers too large"):
        parse_multipart(padded, CT)
