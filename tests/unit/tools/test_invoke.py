"""`invoke` is the one call path: validation, error mapping and output checking, without any store."""

from __future__ import annotations

import logging

import pytest

from shared.core.errors import NotFound
from shared.identity.models import Principal
from shared.tools.invoke import ToolContext, invoke, pop_correlation_id
from shared.tools.registry import ToolInput, ToolOutput, ToolRegistry, ToolSet


class In(ToolInput):
    n: int


class Out(ToolOutput):
    doubled: int


ts = ToolSet("demo")


@ts.tool("demo.double")
async def double(ctx, args: In) -> Out:
    """Double n; n=404 is not found, n=500 crashes."""
    if args.n == 404:
        raise NotFound("no such n", details={"n": 404}, recovery_suggestions=["use another n"])
    if args.n == 500:
        raise RuntimeError("secret internal detail")
    return Out(doubled=args.n * 2)


_TOOL = ToolRegistry([ts]).get("demo.double")
assert _TOOL is not None
TOOL = _TOOL
CTX = ToolContext(
    Principal(workspace_id="w", user_id="u", source="dev"),
    deps=None,  # type: ignore[arg-type]  # the demo tools never touch deps
    correlation_id="corr-1",
)


async def test_success_returns_json_output_and_text() -> None:
    outcome = await invoke(TOOL, {"n": 21}, CTX)
    assert outcome.ok
    assert outcome.output == {"doubled": 42}
    assert '"doubled":42' in outcome.text


@pytest.mark.parametrize(
    ("arguments", "field"),
    [({}, "n"), ({"n": "x"}, "n"), ({"n": 1, "extra": True}, "extra"), ([1, 2], "(root)"), ("n=1", "(root)")],
)
async def test_bad_arguments_name_the_field(arguments, field) -> None:
    outcome = await invoke(TOOL, arguments, CTX)
    assert outcome.error is not None
    assert outcome.error.code == "VALIDATION_ERROR"
    assert field in [e["field"] for e in outcome.error.details["errors"]]


async def test_typed_error_keeps_code_details_and_suggestions() -> None:
    outcome = await invoke(TOOL, {"n": 404}, CTX)
    env = outcome.error_envelope()["error"]
    assert env == {
        "code": "NOT_FOUND",
        "message": "no such n",
        "details": {"n": 404},
        "recovery_suggestions": ["use another n"],
        "correlation_id": "corr-1",
    }


async def test_unexpected_exception_is_internal_error_without_its_message(caplog) -> None:
    with caplog.at_level(logging.ERROR, logger="firebreak.tools"):
        outcome = await invoke(TOOL, {"n": 500}, CTX)
    assert outcome.error is not None
    assert outcome.error.code == "INTERNAL_ERROR"
    assert "secret internal detail" not in outcome.error.message
    assert any("demo.double" in r.getMessage() for r in caplog.records)


def test_correlation_id_argument_is_taken_unless_declared() -> None:
    args = {"n": 1, "correlation_id": "corr-from-args"}
    assert pop_correlation_id(args, TOOL) == "corr-from-args"
    assert args == {"n": 1}
