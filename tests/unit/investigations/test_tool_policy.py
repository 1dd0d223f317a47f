"""Which listed MCP tools the planner is offered: read-only by annotation, or allowed by an operator."""

from __future__ import annotations

import pytest

from shared.core.settings import Settings, SettingsError
from shared.investigations.mcp_servers import CatalogueTool, ToolCatalogue
from shared.investigations.settings import InvestigationSettings
from shared.investigations.tool_policy import ToolPolicy, offer, parse_allowed_tools, withheld_notes


def t(
    name: str, *, server: str = "k8s", read_only: bool | None = None, destructive: bool | None = None
) -> CatalogueTool:
    return CatalogueTool(name=name, server=server, remote_name=name, read_only=read_only, destructive=destructive)


CATALOGUE = ToolCatalogue(
    tools=[
        t("pods_get", read_only=True, destructive=False),
        t("events_list", read_only=True),
        t("exec_shell"),
        t("pods_delete", read_only=False, destructive=True),
        t("odd_reader", read_only=True, destructive=True),
        t("exec_shell_2", server="other"),
    ]
)


def names(catalogue: ToolCatalogue) -> list[str]:
    return [tool.name for tool in catalogue.tools]


def test_only_tools_annotated_read_only_are_offered_and_every_other_is_withheld_with_its_reason() -> None:
    got = offer(CATALOGUE, ToolPolicy())
    assert names(got.catalogue) == ["pods_get", "events_list"]
    assert got.withheld == {
        "exec_shell": "no_read_only_hint",  # the MCP default for a missing readOnlyHint is false
        "pods_delete": "not_read_only",
        "odd_reader": "read_only_but_destructive",
        "exec_shell_2": "no_read_only_hint",
    }
    assert got.allowed == []
    notes = withheld_notes(dict(got.withheld))
    assert len(notes) == 3
    assert "no readOnlyHint" in notes[0]
    assert "exec_shell, exec_shell_2" in notes[0]
    assert "FIREBREAK_INVESTIGATIONS_MCP_ALLOWED_TOOLS" in notes[0]


def test_a_tool_allowed_by_name_is_offered_whatever_its_annotations() -> None:
    got = offer(CATALOGUE, ToolPolicy(allowed=("exec_shell", "pods_delete")))
    assert names(got.catalogue) == ["pods_get", "events_list", "exec_shell", "pods_delete"]
    assert got.allowed == ["exec_shell", "pods_delete"]
    assert set(got.withheld) == {"odd_reader", "exec_shell_2"}


@pytest.mark.parametrize(
    ("entry", "offered"),
    [
        ("k8s/exec_shell", {"exec_shell"}),
        ("other/exec_*", {"exec_shell_2"}),
        ("exec_shell*", {"exec_shell", "exec_shell_2"}),
        ("*/exec_shell?2", {"exec_shell_2"}),
        ("k8s/*", {"exec_shell", "pods_delete", "odd_reader"}),
        ("Exec_Shell", set()),  # tool names compare as the server spells them
        ("k8s/exec", set()),  # a glob matches the whole name, not a part
    ],
)
def test_entries_name_a_tool_on_any_server_or_on_one_and_may_be_globs(entry: str, offered: set[str]) -> None:
    got = offer(CATALOGUE, ToolPolicy(allowed=(entry,)))
    assert set(got.allowed) == offered


def test_a_prefixed_catalogue_name_is_matched_by_the_server_and_the_tools_own_name() -> None:
    two = ToolCatalogue(
        tools=[
            CatalogueTool(name="a__exec", server="a", remote_name="exec"),
            CatalogueTool(name="b__exec", server="b", remote_name="exec"),
        ]
    )
    assert offer(two, ToolPolicy(allowed=("b/exec",))).allowed == ["b__exec"]
    assert offer(two, ToolPolicy(allowed=("a__exec",))).allowed == []


def test_allow_write_tools_still_offers_every_tool_and_says_which() -> None:
    got = offer(CATALOGUE, ToolPolicy(allow_all=True))
    assert names(got.catalogue) == names(CATALOGUE)
    assert got.withheld == {}
    assert got.allowed == ["exec_shell", "pods_delete", "odd_reader", "exec_shell_2"]


def test_allowed_tools_setting_is_parsed_and_checked_at_start() -> None:
    s = InvestigationSettings.from_env({"FIREBREAK_INVESTIGATIONS_MCP_ALLOWED_TOOLS": " k8s/exec_shell , pods_* ,"})
    assert s.tool_policy() == ToolPolicy(allowed=("k8s/exec_shell", "pods_*"))
    assert InvestigationSettings.from_env({}).tool_policy() == ToolPolicy()
    on = InvestigationSettings.from_env({"FIREBREAK_INVESTIGATIONS_MCP_ALLOW_WRITE_TOOLS": "true"})
    assert on.tool_policy().allow_all
    with pytest.raises(SettingsError, match="FIREBREAK_INVESTIGATIONS_MCP_ALLOWED_TOOLS"):
        Settings.from_env(
            {"FIREBREAK_INVESTIGATIONS_MCP_ALLOWED_TOOLS": "k8s/exec shell"}, sections=(InvestigationSettings,)
        )


@pytest.mark.parametrize("bad", ["exec shell", "a;b", "k8s/", "/exec", "x" * 200, "é"])
def test_allowed_tools_entries_that_are_not_names_are_refused(bad: str) -> None:
    with pytest.raises(SettingsError, match="FIREBREAK_INVESTIGATIONS_MCP_ALLOWED_TOOLS"):
        parse_allowed_tools(bad)


def test_a_record_written_before_the_reasons_were_kept_still_gets_its_note() -> None:
    assert withheld_notes({"pods_delete": ""}) == [
        "tools marked not read-only were withheld from the investigation: pods_delete"
    ]
