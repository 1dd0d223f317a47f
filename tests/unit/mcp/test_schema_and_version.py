"""The correlation_id every tool's schema declares is the rule pop_correlation_id checks; the server's version."""

from __future__ import annotations

import re

import pytest

from shared.app.capabilities import catalogue
from shared.core.logging import is_safe_correlation_id
from shared.core.settings import Settings
from shared.mcp.endpoint import server_version
from shared.tools.registry import CORRELATION_ARGUMENT

CANDIDATES = ["abc", "A-1.b_2:c", "a" * 128, "a" * 129, "", "a b", "é", "x\r\ny", "x\n", "id/1"]


@pytest.mark.parametrize("candidate", CANDIDATES)
def test_the_schema_pattern_and_length_accept_exactly_what_the_check_accepts(candidate: str) -> None:
    # JSON Schema patterns are ECMA-262: an anchored ^...$ matches the whole string (Python's $ would also
    # match before a final newline), so the schema's pattern is applied here as a full match.
    pattern = CORRELATION_ARGUMENT["pattern"]
    assert pattern.startswith("^")
    assert pattern.endswith("$")
    by_schema = (
        CORRELATION_ARGUMENT["minLength"] <= len(candidate) <= CORRELATION_ARGUMENT["maxLength"]
        and re.fullmatch(pattern[1:-1], candidate) is not None
    )
    assert by_schema == is_safe_correlation_id(candidate)


def test_every_tool_that_does_not_declare_one_lists_the_argument() -> None:
    for tool in catalogue().registry:
        declared = "correlation_id" in tool.input_model.model_fields
        prop = tool.input_schema["properties"]["correlation_id"]
        assert declared or prop == CORRELATION_ARGUMENT, tool.name


def test_the_version_is_the_build_version_with_the_commit_when_known() -> None:
    assert server_version(Settings(build_version="1.4.0")) == "1.4.0"
    assert server_version(Settings(build_version="1.4.0", build_commit="0123456789abcdef01")) == "1.4.0+0123456789ab"
