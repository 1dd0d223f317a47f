"""MCP server settings and the tool catalogue, without a server: parsing, secrets kept out, naming on clashes."""

from __future__ import annotations

import json

import mcp_types as types
import pytest

from shared.core.settings import SettingsError
from shared.investigations.mcp_servers import (
    ALLOW_STDIO_SETTING,
    SERVERS_SETTING,
    McpClientSettings,
    McpServerConfig,
    ServerStatus,
    ToolCatalogue,
    build_catalogue,
    parse_servers,
    truncate_utf8,
)
from shared.investigations.tool_policy import ToolPolicy, offer

SECRET = "Bearer very-secret-token-42"


def test_unset_or_empty_is_no_server() -> None:
    assert parse_servers(None, allow_stdio=False) == []
    assert parse_servers("  ", allow_stdio=False) == []
    assert parse_servers("[]", allow_stdio=False) == []


def test_a_json_list_of_http_and_stdio_servers() -> None:
    value = json.dumps(
        [
            {"name": "k8s", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": SECRET}},
            {"name": "local", "command": "npx", "args": ["-y", "kubernetes-mcp-server@latest", "--read-only"]},
        ]
    )
    k8s, local = parse_servers(value, allow_stdio=True)
    assert (k8s.transport, k8s.url, k8s.headers["Authorization"].get_secret_value()) == (
        "http",
        "https://mcp.example.com/mcp",
        SECRET,
    )
    assert (local.transport, local.command, local.args) == (
        "stdio",
        "npx",
        ["-y", "kubernetes-mcp-server@latest", "--read-only"],
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("{not json", f"{SERVERS_SETTING}: not valid JSON (line 1, column 2"),
        ('{"name": "a"}', f"{SERVERS_SETTING}: expected a JSON list of server objects, got dict"),
        ('[{"url": "https://x.example/mcp"}]', f"{SERVERS_SETTING}[0]: name: Field required"),
        ('[{"name": "bad name", "url": "https://x.example/mcp"}]', f"{SERVERS_SETTING}[0] ('bad name'): name: String"),
        ('[{"name": "a"}]', "give exactly one of 'url' (Streamable HTTP) or 'command' (stdio)"),
        ('[{"name": "a", "url": "https://x.example", "command": "npx"}]', "give exactly one of 'url'"),
        ('[{"name": "a", "url": "https://x.example", "args": ["-v"]}]', "'args' and 'env' belong to a stdio server"),
        ('[{"name": "a", "command": "npx", "headers": {"A": "b"}}]', "'headers' belong to a 'url' server"),
        ('[{"name": "a", "url": "https://x.example", "timeout": 3}]', "[0] ('a'): timeout: Extra inputs"),
        ('[{"name": "a", "url": "ftp://x.example/mcp"}]', "'url' must be an http(s) URL with a host"),
        ('[{"name": "a", "url": "https:///mcp"}]', "'url' must be an http(s) URL with a host"),
        ('[{"name": "a", "url": "https://x.example", "headers": {"Accept": "x"}}]', "set by the MCP transport"),
        ('[{"name": "a", "url": "https://x.example", "headers": {"Bad Name": "x"}}]', "not a valid HTTP header name"),
        ('[{"name": "a", "command": "x", "env": {"1X": "v"}}]', "environment variable name '1X' is not valid"),
        (
            '[{"name": "a", "url": "https://x.example"}, {"name": "a", "url": "https://y.example"}]',
            f"{SERVERS_SETTING}[1] ('a'): the name 'a' is used twice",
        ),
    ],
)
def test_bad_settings_name_the_entry_and_the_problem(value: str, expected: str) -> None:
    with pytest.raises(SettingsError) as info:
        parse_servers(value, allow_stdio=True)
    assert expected in str(info.value)


def test_a_bad_header_value_is_named_but_never_echoed() -> None:
    value = [{"name": "a", "url": "https://x.example", "headers": {"Authorization": SECRET + "\r\nX-Evil: 1"}}]
    with pytest.raises(SettingsError) as info:
        parse_servers(value, allow_stdio=False)
    assert "header 'Authorization': the value contains a line break" in str(info.value)
    assert "very-secret-token" not in str(info.value)


def test_stdio_servers_are_refused_unless_allowed() -> None:
    value = '[{"name": "local", "command": "npx", "args": ["-y", "kubernetes-mcp-server@latest"]}]'
    with pytest.raises(SettingsError) as info:
        parse_servers(value, allow_stdio=False)
    assert "for local use only" in str(info.value)
    assert ALLOW_STDIO_SETTING in str(info.value)


def test_secrets_stay_out_of_repr_dumps_and_the_public_view() -> None:
    http = McpServerConfig.model_validate(
        {"name": "k8s", "url": "https://mcp.example.com/mcp?api_key=querysecret1", "headers": {"X-Key": SECRET}}
    )
    stdio = McpServerConfig.model_validate(
        {"name": "local", "command": "srv", "args": ["--token=argsecret12"], "env": {"KUBE_TOKEN": "envsecret12"}}
    )
    texts = [repr(http), repr(stdio), str(http.public()), str(stdio.public())]
    for secret in ("very-secret-token", "querysecret1", "argsecret12", "envsecret12"):
        assert all(secret not in t for t in texts), secret
    # The dump is the configuration itself (URL and args included); header and env values stay masked even there.
    assert "very-secret-token" not in http.model_dump_json()
    assert "envsecret12" not in stdio.model_dump_json()
    assert http.public() == {
        "name": "k8s",
        "transport": "http",
        "url": "https://mcp.example.com/mcp?api_key=[REDACTED]",
        "header_names": ["X-Key"],
    }
    assert stdio.public()["env_names"] == ["KUBE_TOKEN"]
    assert stdio.scrub("failed: envsecret12 rejected") == "failed: [REDACTED] rejected"


def tool(name: str, **extra: object) -> types.Tool:
    return types.Tool(name=name, input_schema={"type": "object"}, **extra)  # type: ignore[arg-type]


def ok(name: str, count: int) -> ServerStatus:
    return ServerStatus(name=name, transport="http", ok=True, tool_count=count)


def test_names_are_kept_unless_two_servers_offer_the_same_tool() -> None:
    catalogue = build_catalogue(
        [
            (ok("a", 3), [tool("pods_get"), tool("events_list"), tool("pods_get")]),
            (ServerStatus(name="down", transport="http", ok=False, error="no answer within 5 s"), []),
            (ok("b", 2), [tool("pods_get"), tool("tempo_fetch_traces", description="traces")]),
        ]
    )
    assert [(t.name, t.server, t.remote_name) for t in catalogue.tools] == [
        ("a__pods_get", "a", "pods_get"),
        ("events_list", "a", "events_list"),
        ("b__pods_get", "b", "pods_get"),
        ("tempo_fetch_traces", "b", "tempo_fetch_traces"),
    ]
    assert [s.name for s in catalogue.failed] == ["down"]
    assert catalogue.get("tempo_fetch_traces") is not None
    assert catalogue.get("pods_get") is None


def test_a_prefixed_name_that_is_already_taken_gets_a_suffix() -> None:
    catalogue = build_catalogue(
        [(ok("a", 2), [tool("x"), tool("b__x")]), (ok("b", 1), [tool("x")])],
    )
    assert [t.name for t in catalogue.tools] == ["a__x", "b__x", "b__x_2"]


def test_annotations_and_schemas_are_carried() -> None:
    listed = tool(
        "pods_get",
        title="Get pod",
        description="Get a pod",
        annotations=types.ToolAnnotations(read_only_hint=True),
    )
    (entry,) = build_catalogue([(ok("k8s", 1), [listed])]).tools
    assert (entry.title, entry.description, entry.read_only, entry.input_schema) == (
        "Get pod",
        "Get a pod",
        True,
        {"type": "object"},
    )


def test_the_catalogue_survives_a_json_round_trip() -> None:
    # Durable passes it between activities as JSON: it must come back equal and hold no secret.
    catalogue = build_catalogue([(ok("a", 1), [tool("pods_get")]), (ok("b", 1), [tool("pods_get")])])
    assert ToolCatalogue.model_validate_json(catalogue.model_dump_json()) == catalogue


def test_truncation_cuts_on_a_character_boundary() -> None:
    assert truncate_utf8("abc", 3) == ("abc", False, 3)
    text, cut, size = truncate_utf8("aé" * 4, 4)  # 'é' is two bytes: a é a = 4 bytes
    assert (text, cut, size) == ("aéa", True, 12)
    text, cut, _ = truncate_utf8("ééé", 3)
    assert (text, cut) == ("é", True)


def test_settings_from_the_environment() -> None:
    env = {
        SERVERS_SETTING: '[{"name": "local", "command": "npx", "args": ["-y", "kubernetes-mcp-server@latest"]}]',
        ALLOW_STDIO_SETTING: "true",
        "FIREBREAK_INVESTIGATIONS_MCP_CALL_TIMEOUT_SECONDS": "12.5",
        "FIREBREAK_INVESTIGATIONS_MCP_MAX_OUTPUT_BYTES": "4096",
    }
    settings = McpClientSettings.from_env(env, running_on_azure=False)
    assert [s.name for s in settings.servers] == ["local"]
    assert (settings.allow_stdio, settings.call_timeout_seconds, settings.max_output_bytes) == (True, 12.5, 4096)
    assert settings.list_timeout_seconds == 15.0
    assert McpClientSettings.from_env({}, running_on_azure=True) == McpClientSettings()


def test_stdio_is_refused_on_azure_and_bad_numbers_name_their_variable() -> None:
    with pytest.raises(SettingsError, match="refused on Azure"):
        McpClientSettings.from_env({ALLOW_STDIO_SETTING: "true"}, running_on_azure=True)
    with pytest.raises(SettingsError, match="FIREBREAK_INVESTIGATIONS_MCP_CALL_TIMEOUT_SECONDS: Input should be"):
        McpClientSettings.from_env({"FIREBREAK_INVESTIGATIONS_MCP_CALL_TIMEOUT_SECONDS": "-1"}, running_on_azure=False)
    with pytest.raises(SettingsError, match=f"{ALLOW_STDIO_SETTING}: expected true or false"):
        McpClientSettings.from_env({ALLOW_STDIO_SETTING: "maybe"}, running_on_azure=False)


def test_a_hostile_tool_list_is_bounded_in_the_catalogue() -> None:
    huge_schema = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string", "description": "x" * 100} for i in range(400)},
    }
    listed = [
        types.Tool(name="ok_tool", description="d" * 50_000, input_schema=huge_schema),
        tool("x" * 500),  # a name no planner should carry around
        tool("bad\nname"),
        *(tool(f"t{i}") for i in range(400)),
    ]
    catalogue = build_catalogue([(ok("evil", len(listed)), listed)])
    first = catalogue.tools[0]
    assert first.name == "ok_tool"
    assert len(first.description) == 2_000
    assert first.input_schema["type"] == "object"
    assert "properties" not in first.input_schema  # over 16,384 characters: not kept
    names = {t.name for t in catalogue.tools}
    assert "x" * 500 not in names
    assert "bad\nname" not in names
    assert len(catalogue.tools) == 300
    assert len(catalogue.model_dump_json()) < 200_000


@pytest.mark.parametrize(
    "second",
    [
        None,
        types.ToolAnnotations(read_only_hint=False),
        types.ToolAnnotations(read_only_hint=True, destructive_hint=True),
    ],
)
def test_a_tool_listed_twice_keeps_the_least_read_only_of_its_annotations(
    second: types.ToolAnnotations | None,
) -> None:
    """A server (an aggregating gateway, a buggy list) that lists one name twice, once read-only and once not,
    has not said the tool only looks: the call goes to whichever the server picks, so it is withheld."""
    reader = types.ToolAnnotations(read_only_hint=True, destructive_hint=False)
    listed = [tool("exec", annotations=reader), tool("exec", annotations=second)]
    catalogue = build_catalogue([(ok("gw", 2), listed)])
    assert [t.name for t in catalogue.tools] == ["exec"]
    assert offer(catalogue, ToolPolicy()).catalogue.tools == []
    # Listed twice the same way, it is what it says.
    same = build_catalogue([(ok("gw", 2), [tool("exec", annotations=reader), tool("exec", annotations=reader)])])
    assert [t.name for t in offer(same, ToolPolicy()).catalogue.tools] == ["exec"]
