"""How a capability declares itself: its tools, settings, containers, orchestrations, checks and docs.

Each capability package has a `capability.py` with one `CAPABILITY = Capability(...)`; the composition
root (`shared/app/capabilities.py`) lists them, and `Catalogue` collects the parts for the rest of the
app: the tool registry (MCP, per-tool HTTP, GET /api/tools), the Cosmos container catalogue (storage,
README, infra), the settings sections, the Durable orchestrations the functions layer registers, and
the checks health and diagnostics run. Nothing outside the capability's folder names its parts.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, cast

from pydantic import BaseModel, ValidationError

from shared.core.settings import Settings, SettingsSection
from shared.storage.containers import ContainerSpec, catalogue_of
from shared.tools.checks import Check
from shared.tools.deps import Deps
from shared.tools.registry import ToolRegistry, ToolSet
from shared.tools.routes import RouteSet, RouteTable


class RunContext(Protocol):
    """What an orchestration's code sees: the Durable context, with activities bound to the run.

    The code is replayed, so it must be deterministic: no clock, no random, no I/O (that goes in an
    activity). `call_activity(name, args)` hands `args` (a model) to the activity together with the run.
    """

    @property
    def run_id(self) -> str: ...

    @property
    def correlation_id(self) -> str | None:
        """The correlation id the run was started with (for its output and logs)."""
        ...

    @property
    def current_utc_datetime(self) -> datetime:
        """The orchestration's clock: the time of the history event being replayed (never the wall clock)."""
        ...

    def call_activity(self, name: str, args: BaseModel | None = None, *, retry: RetryPolicy | None = None) -> Any:
        """Schedule activity `name` with `args`, an instance of its declared input model (None: it takes none).

        Yielding the task gives the activity's result as an instance of its declared output model (None
        when it declares none), validated here too: on replay the result comes back from the history as JSON.
        With `retry`, a failed attempt is retried by the engine (durably).
        """
        ...

    def task_all(self, tasks: list[Any]) -> Any: ...

    def create_timer(self, fire_at: datetime) -> Any:
        """A durable wait until `fire_at` (an orchestration-clock time): yield it; no worker sits idle meanwhile."""
        ...

    def set_custom_status(self, status: Any) -> None: ...


@dataclass(frozen=True)
class RetryPolicy:
    """How the Durable engine retries a failed activity: `max_attempts` in all, waits growing by `backoff`.

    The engine keeps the retries in the orchestration's history, so a retry survives a host restart.
    """

    first_interval_seconds: float = 1.0
    max_attempts: int = 3
    backoff: float = 2.0
    max_interval_seconds: float | None = 30.0

    def __post_init__(self) -> None:
        if self.first_interval_seconds <= 0 or self.max_attempts < 1 or self.backoff < 1.0:
            raise ValueError("a retry policy needs a positive first interval, 1+ attempts and a backoff of 1.0+")


class ActiveRun(Protocol):
    """The claimed, still running run an activity works for (loaded by the activity, not taken from its input)."""

    @property
    def run_id(self) -> str: ...

    @property
    def workspace_id(self) -> str: ...

    @property
    def user_id(self) -> str:
        """Who started the run (in `workspace_id`)."""
        ...

    @property
    def plan(self) -> dict[str, Any]: ...

    async def secrets(self) -> dict[str, Any]:
        """The run's decrypted secrets ({} without any); refused once they expired."""
        ...


class ActivityPayloadInvalid(ValueError):
    """An activity's input or output does not fit its declared model (the message names the fields, never values)."""


In = TypeVar("In", bound=BaseModel | None)
Out = TypeVar("Out", bound=BaseModel | None)
Plan = TypeVar("Plan", bound=BaseModel)


@dataclass(frozen=True)
class ActivitySpec(Generic[In, Out]):
    """One activity of an orchestration: its code and the pydantic models of what it takes and returns.

    The frame checks both ends as tools' arguments are checked: the orchestrator's `args` must be an
    `input` instance (sent to Durable as JSON), the activity gets them validated into `input` again,
    its return is validated into `output`, and the orchestrator gets an `output` instance back (from
    the history's JSON on replay). `input=None`: the activity takes nothing; `output=None`: it returns None.
    """

    code: Callable[[ActiveRun, In, Deps], Awaitable[Out]]
    input: type[In] | None = None
    output: type[Out] | None = None

    def send(self, name: str, args: BaseModel | None) -> dict[str, Any] | None:
        """The orchestrator's `args` as the JSON Durable carries (ActivityPayloadInvalid for the wrong type)."""
        model = _model(self.input)
        if model is None:
            if args is not None:
                raise ActivityPayloadInvalid(f"activity {name} takes no input, got a {type(args).__name__}")
            return None
        if not isinstance(args, model):
            raise ActivityPayloadInvalid(f"activity {name} takes a {model.__name__}, got a {type(args).__name__}")
        return args.model_dump(mode="json")

    def receive(self, name: str, raw: Any) -> In:
        """The input as the activity sees it: the JSON Durable handed over, validated into `input`."""
        return cast(In, _validated(_model(self.input), raw, f"activity {name}'s input"))

    def reply(self, name: str, result: Any) -> dict[str, Any] | None:
        """The activity's return, validated into `output`, as the JSON Durable records."""
        if isinstance(result, BaseModel):
            result = result.model_dump(warnings=False)  # validated again: a model built with model_construct was not
        model = _validated(_model(self.output), result, f"activity {name}'s output")
        return None if model is None else model.model_dump(mode="json")

    def result(self, name: str, raw: Any) -> Out:
        """The result as the orchestrator sees it: the recorded JSON, validated into `output` (replay reads it too)."""
        return cast(Out, _validated(_model(self.output), raw, f"activity {name}'s result"))


def _model(declared: type[Any] | None) -> type[BaseModel] | None:
    # A declared `type[In]` is a model class or None; In's bound (BaseModel | None) hides that from mypy.
    return declared


def _validated(model: type[BaseModel] | None, raw: Any, what: str) -> BaseModel | None:
    if model is None:
        if raw is not None:
            raise ActivityPayloadInvalid(f"{what} must be empty, got a {type(raw).__name__}")
        return None
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise ActivityPayloadInvalid(f"{what} does not fit {model.__name__}: {_field_errors(exc)}") from None


def _field_errors(exc: ValidationError, limit: int = 5) -> str:
    """`field.path: message` for the first `limit` errors; the values are left out (they may be secret)."""
    shown = [
        f"{'.'.join(str(p) for p in e['loc']) or '(the whole value)'}: {e['msg']}"
        for e in exc.errors(include_url=False, include_input=False)[:limit]
    ]
    more = exc.error_count() - len(shown)
    return "; ".join(shown) + (f" (and {more} more)" if more > 0 else "")


@dataclass(frozen=True)
class Orchestration(Generic[Plan]):
    """A Durable orchestration of a capability, run for an owner through shared/runs.

    The functions layer registers an orchestrator function named `name` that claims the run recorded
    under its instance id (re-validating the stored plan with `validate_plan`, which returns a `plan`
    instance), runs `orchestrator` with the plan (validated into `plan` again from the claim's JSON),
    and records its output, a model, as JSON (or the failure); and one activity function per entry of
    `activities`, which loads the run before calling the capability's code with its validated input
    (see ActivitySpec). Names are the Durable function names: keep them as constants in the capability
    and never retype them elsewhere.
    """

    name: str
    orchestrator: Callable[[RunContext, Plan], Generator[Any, Any, BaseModel]]
    activities: Mapping[str, ActivitySpec[Any, Any]]
    plan: type[Plan]
    validate_plan: Callable[[dict[str, Any], Deps], Plan]
    description: str = ""


@dataclass(frozen=True)
class Capability:
    """One capability's whole story, declared in its own folder."""

    name: str
    summary: str
    toolset: ToolSet | None = None
    # REST routes for apps (the mobile app's /api/tasks...), documented in /api/openapi.json.
    routes: RouteSet | None = None
    settings: type[SettingsSection] | None = None
    containers: tuple[ContainerSpec, ...] = ()
    orchestrations: tuple[Orchestration[Any], ...] = ()
    checks: tuple[Check, ...] = ()
    # The capability's section of the README (its folder's README.md), included by `make docs`.
    readme: Path | None = None


_FUNCTION_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,127}")


def _unique(kind: str, names: Iterable[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"{kind} {name!r} is declared twice")
        seen.add(name)


def _capability_names_are_unique(capabilities: Sequence[Capability]) -> None:
    """The docs, the manifest and every part's owner are keyed by capability name: two of one name would merge."""
    _unique("capability", (c.name for c in capabilities))


def _toolsets_belong_to_their_capability(capabilities: Sequence[Capability]) -> None:
    """A tool's capability (in the manifest and the docs) is its ToolSet's: a toolset declared by another
    capability would file its tools under the wrong owner."""
    for c in capabilities:
        if c.toolset is not None and c.toolset.capability != c.name:
            raise ValueError(f"capability {c.name!r} declares the toolset of {c.toolset.capability!r}")


def _routes_belong_to_their_capability(capabilities: Sequence[Capability]) -> None:
    """A route's capability (in the manifest) is its RouteSet's: as for toolsets, the owner must be the
    capability that declares it."""
    for c in capabilities:
        if c.routes is not None and c.routes.capability != c.name:
            raise ValueError(f"capability {c.name!r} declares the routes of {c.routes.capability!r}")


def _settings_sections_are_unique(sections: Sequence[type[SettingsSection]]) -> None:
    """The docs, the infra spec and errors name a section by its class name, and `Settings.section` finds one
    by type: a section collected twice (or two of one name) could not be told apart."""
    _unique("settings section", (s.__name__ for s in sections))


def _environment_variables_are_unique(sections: Sequence[type[SettingsSection]]) -> None:
    """One environment variable feeds one setting: aliases count too, and the platform's own `Settings` and the
    variables it reads by hand (`extra_env_names`), so a section never reads another's value by accident."""
    everything: tuple[type[SettingsSection], ...] = (Settings, *sections)
    _unique(
        "environment variable",
        (
            *(key for s in everything for key in (*s.env_names().values(), *s.env_aliases.values())),
            *Settings.extra_env_names,
        ),
    )


def _check_names_are_unique(checks: Sequence[Check]) -> None:
    """Health and diagnostics run and report a check by name (`diagnostics` takes one by name): names are keys."""
    _unique("check", (check.name for check in checks))


def _orchestration_names_are_unique(capabilities: Sequence[Capability]) -> None:
    """An orchestration's name is its Durable function name and the key runs are started by: a second of one
    name would silently replace the first in the catalogue."""
    _unique("orchestration", (o.name for c in capabilities for o in c.orchestrations))


def _durable_function_names_are_valid(names: Iterable[str]) -> None:
    """Orchestration and activity names become Azure function names: refuse a bad one when the catalogue is built
    (`make manifest`, every test session), not when the host indexes the deployed app. The pattern: a letter,
    then letters, digits or '_', 128 characters at most."""
    for name in names:
        if not _FUNCTION_NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not a valid function name (a letter, then letters, digits or '_')")


def _function_names_are_unique_ignoring_case(names: Iterable[str]) -> None:
    """Azure compares function names (and routes) ignoring case: tools, routes, Durable functions and the
    functions layer's own share one lower-cased namespace, and a clash there would show only once deployed."""
    _unique("function name (ignoring case)", (n.lower() for n in names))


class Catalogue:
    """Every capability's parts, collected and checked for clashes once per process."""

    def __init__(self, capabilities: Sequence[Capability], reserved_function_names: Iterable[str] = ()) -> None:
        """`reserved_function_names`: the functions layer's own function names, which no declaration may take."""
        _capability_names_are_unique(capabilities)
        _toolsets_belong_to_their_capability(capabilities)
        self.capabilities = tuple(capabilities)
        self.reserved_function_names = tuple(reserved_function_names)
        # The registry and the route table refuse their own clashes (tool names, routes, paths).
        self.registry = ToolRegistry(c.toolset for c in capabilities if c.toolset is not None)
        _routes_belong_to_their_capability(capabilities)
        self.routes = RouteTable(c.routes for c in capabilities if c.routes is not None)
        self.containers = catalogue_of(spec for c in capabilities for spec in c.containers)
        self.settings_sections = tuple(c.settings for c in capabilities if c.settings is not None)
        _settings_sections_are_unique(self.settings_sections)
        _environment_variables_are_unique(self.settings_sections)
        self.checks = tuple(check for c in capabilities for check in c.checks)
        _check_names_are_unique(self.checks)
        _orchestration_names_are_unique(capabilities)
        self.orchestrations = {o.name: o for c in capabilities for o in c.orchestrations}
        self.activities = {name: (o, fn) for o in self.orchestrations.values() for name, fn in o.activities.items()}
        # Every declared name, repeats kept: two orchestrations naming one activity clash below.
        durable = [*self.orchestrations, *(name for o in self.orchestrations.values() for name in o.activities)]
        _durable_function_names_are_valid(durable)
        _function_names_are_unique_ignoring_case(
            (
                *self.reserved_function_names,
                *(t.function_name for t in self.registry),
                *(r.function_name for r in self.routes),
                *durable,
            )
        )

    def capability_of_orchestration(self, name: str) -> str:
        return next(c.name for c in self.capabilities if any(o.name == name for o in c.orchestrations))
