"""The catalogue refuses declarations that would clash once deployed, and the platform's function list is true."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, ClassVar

import pytest
from pydantic import Field

from devhost.index import index_functions, load_app
from devhost.stack import ROOT
from shared.app.capabilities import CAPABILITIES, PLATFORM_FUNCTIONS, catalogue
from shared.core.settings import SettingsSection
from shared.tools.capability import ActiveRun, ActivitySpec, Capability, Catalogue, Orchestration, RunContext
from shared.tools.checks import Check
from shared.tools.deps import Deps
from shared.tools.invoke import ToolContext
from shared.tools.registry import ToolInput, ToolOutput, ToolSet
from shared.tools.routes import RouteSet


class In(ToolInput):
    pass


class Out(ToolOutput):
    ok: bool = True


def _orchestrator(ctx: RunContext, plan: In) -> Generator[Any, Any, Out]:
    yield ctx.call_activity("x")
    return Out()


async def _activity(run: ActiveRun, args: None, deps: Deps) -> None:
    return None


def _with_orchestration(name: str, activity: str = "extra_step", capability: str = "extra") -> Capability:
    orchestration = Orchestration(
        name, _orchestrator, {activity: ActivitySpec(_activity)}, In, lambda plan, deps: In.model_validate(plan)
    )
    return Capability(name=capability, summary="test", orchestrations=(orchestration,))


def _catalogue(*extra: Capability) -> Catalogue:
    return Catalogue((*CAPABILITIES, *extra), PLATFORM_FUNCTIONS)


def test_the_app_catalogue_is_valid() -> None:
    assert _catalogue().registry is not None


@pytest.mark.parametrize(
    "name", ["runs_claim", "RUNS_FINISH", "mcp", "Health", "tool_whoami", "diagnostics_orchestrator"]
)
def test_an_orchestration_may_not_take_a_platform_tool_or_existing_function_name(name: str) -> None:
    with pytest.raises(ValueError, match=r"function name|declared twice"):
        _catalogue(_with_orchestration(name))


def test_an_activity_may_not_take_a_platform_name_in_any_case() -> None:
    with pytest.raises(ValueError, match="ignoring case"):
        _catalogue(_with_orchestration("extra_orchestrator", activity="Runs_Claim"))


def test_an_invalid_function_name_is_refused() -> None:
    with pytest.raises(ValueError, match="not a valid function name"):
        _catalogue(_with_orchestration("bad name!"))


def test_two_tools_equal_but_for_case_are_refused() -> None:
    toolset = ToolSet("extra")

    @toolset.tool("WhoAmI", title="Shadow")
    async def shadow(ctx: ToolContext, args: In) -> Out:
        """Would be routed with whoami on Azure."""
        return Out()

    with pytest.raises(ValueError, match="one function name or route"):
        _catalogue(Capability(name="extra", summary="test", toolset=toolset))


def test_a_section_may_not_alias_another_variable() -> None:
    class Grabby(SettingsSection):
        env_prefix = "grabby_"
        env_aliases: ClassVar[dict[str, str]] = {"key": "COSMOS_KEY"}

        key: str | None = Field(None, description="Would read the platform's Cosmos key.")

    with pytest.raises(ValueError, match="COSMOS_KEY"):
        _catalogue(Capability(name="extra", summary="test", settings=Grabby))


def test_a_section_may_not_alias_a_variable_the_platform_reads_by_hand() -> None:
    class Sneaky(SettingsSection):
        env_prefix = "sneaky_"
        env_aliases: ClassVar[dict[str, str]] = {"url": "OPENAI_BASE_URL"}

        url: str | None = Field(None, description="Would read the LLM base URL.")

    with pytest.raises(ValueError, match="OPENAI_BASE_URL"):
        _catalogue(Capability(name="extra", summary="test", settings=Sneaky))


def test_two_capabilities_of_one_name_are_refused() -> None:
    existing = CAPABILITIES[0].name
    with pytest.raises(ValueError, match=f"capability '{existing}' is declared twice"):
        _catalogue(Capability(name=existing, summary="test"))


def test_a_capability_may_not_declare_another_capabilitys_toolset() -> None:
    with pytest.raises(ValueError, match="declares the toolset of 'other'"):
        _catalogue(Capability(name="extra", summary="test", toolset=ToolSet("other")))


def test_a_capability_may_not_declare_another_capabilitys_routes() -> None:
    with pytest.raises(ValueError, match="declares the routes of 'other'"):
        _catalogue(Capability(name="extra", summary="test", routes=RouteSet("other")))


def test_a_settings_section_collected_twice_is_refused() -> None:
    section = next(c.settings for c in CAPABILITIES if c.settings is not None)
    with pytest.raises(ValueError, match=f"settings section '{section.__name__}' is declared twice"):
        _catalogue(Capability(name="extra", summary="test", settings=section))


def test_two_sections_may_not_read_one_variable() -> None:
    class First(SettingsSection):
        env_prefix = "twin_"

        value: str | None = Field(None, description="FIREBREAK_TWIN_VALUE.")

    class Second(SettingsSection):
        env_prefix = "twin_"

        value: str | None = Field(None, description="FIREBREAK_TWIN_VALUE as well.")

    with pytest.raises(ValueError, match="environment variable 'FIREBREAK_TWIN_VALUE' is declared twice"):
        _catalogue(
            Capability(name="first", summary="test", settings=First),
            Capability(name="second", summary="test", settings=Second),
        )


def test_a_check_name_taken_twice_is_refused() -> None:
    existing = catalogue().checks[0]
    check = Check(existing.name, "a second probe of one name", existing.probe)
    with pytest.raises(ValueError, match=f"check '{existing.name}' is declared twice"):
        _catalogue(Capability(name="extra", summary="test", checks=(check,)))


def test_two_orchestrations_of_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="orchestration 'twin_orchestrator' is declared twice"):
        _catalogue(
            _with_orchestration("twin_orchestrator", activity="first_step", capability="first"),
            _with_orchestration("twin_orchestrator", activity="second_step", capability="second"),
        )


def test_two_orchestrations_may_not_share_an_activity_name() -> None:
    with pytest.raises(ValueError, match="function name \\(ignoring case\\) 'shared_step' is declared twice"):
        _catalogue(
            _with_orchestration("first_orchestrator", activity="shared_step", capability="first"),
            _with_orchestration("second_orchestrator", activity="shared_step", capability="second"),
        )


def test_platform_functions_are_exactly_what_the_app_indexes_besides_the_catalogue() -> None:
    indexed = {f.name for f in index_functions(load_app(ROOT))}
    cat = catalogue()
    declared = (
        {t.function_name for t in cat.registry}
        | {r.function_name for r in cat.routes}
        | set(cat.orchestrations)
        | set(cat.activities)
    )
    assert indexed - declared == set(PLATFORM_FUNCTIONS)
    assert declared <= indexed
