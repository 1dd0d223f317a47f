"""A throwaway capability, declared entirely in this test module: settings, a container, two tools, an
orchestration with an activity, and a check. tests/fixtures/plugin_app serves the app's capabilities
plus this one, to show that a capability plugs in without a line changed anywhere else."""

from __future__ import annotations

import uuid
from collections.abc import Generator
from typing import Any

from pydantic import BaseModel, Field

from shared.core.settings import SettingsSection
from shared.storage.containers import ContainerSpec
from shared.tools.capability import ActiveRun, ActivitySpec, Capability, Orchestration, RunContext
from shared.tools.checks import Check
from shared.tools.deps import Deps
from shared.tools.invoke import ToolContext
from shared.tools.registry import ToolInput, ToolOutput, ToolSet
from shared.tools.routes import Answer, RouteBody, RouteCall, RouteParams, RouteSet

ORCHESTRATOR = "throwaway_count_orchestrator"
ADD_ACTIVITY = "throwaway_add"


class ThrowawaySettings(SettingsSection):
    env_prefix = "throwaway_"

    greeting: str = Field("hello", description="What throwaway_note answers with.")


NOTES = ContainerSpec("throwaway_notes", "/workspace_id", "Notes of the throwaway test capability.")

toolset = ToolSet("throwaway")


class NoteRequest(ToolInput):
    text: str = Field(min_length=1, max_length=100, description="The note to store.")


class NoteResult(ToolOutput):
    greeting: str = Field(description="FIREBREAK_THROWAWAY_GREETING.")
    note_id: str
    stored_text: str = Field(description="The note as read back from the container.")


class CountRequest(ToolInput):
    upto: int = Field(ge=1, le=5, description="How many activities to run.")


class CountStarted(ToolOutput):
    run_id: str
    status_url: str


@toolset.tool("throwaway_note", title="Store a note (test capability)")
async def throwaway_note(ctx: ToolContext, args: NoteRequest) -> NoteResult:
    """Store a note in the throwaway container, read it back, and greet with the capability's setting."""
    notes = await ctx.deps.cosmos.container(NOTES.name)
    note_id = uuid.uuid4().hex
    await notes.create({"id": note_id, "workspace_id": ctx.principal.workspace_id, "text": args.text})
    back = await notes.get(note_id, ctx.principal.workspace_id)
    return NoteResult(
        greeting=ctx.deps.settings.section(ThrowawaySettings).greeting, note_id=note_id, stored_text=back["text"]
    )


@toolset.tool("throwaway_count", title="Count in the background (test capability)")
async def throwaway_count(ctx: ToolContext, args: CountRequest) -> CountStarted:
    """Start the throwaway orchestration, which adds 1..upto in one activity per number; poll runs.status."""
    assert ctx.orchestrations is not None
    started = await ctx.orchestrations.start(
        ORCHESTRATOR, ctx.principal, {"upto": args.upto}, correlation_id=ctx.correlation_id
    )
    return CountStarted(run_id=started.run_id, status_url=started.status_url)


class Step(BaseModel):
    """The add activity's input: which number to add."""

    i: int = Field(ge=0)


class Added(BaseModel):
    """The add activity's output."""

    value: int


class Counted(BaseModel):
    """The orchestration's output."""

    total: int
    greeting_seen_by: str


def _validate(plan: dict[str, Any], deps: Deps) -> CountRequest:
    return CountRequest.model_validate(plan)


def _count(ctx: RunContext, plan: CountRequest) -> Generator[Any, Any, Counted]:
    total = 0
    for i in range(plan.upto):
        ctx.set_custom_status({"stage": "adding", "done": i, "total": plan.upto})
        added: Added = yield ctx.call_activity(ADD_ACTIVITY, Step(i=i))
        total += added.value
    return Counted(total=total, greeting_seen_by=ctx.run_id)


async def _add(run: ActiveRun, step: Step, deps: Deps) -> Added:
    # The activity sees its run as loaded by id: the plan it was claimed with bounds what it may do.
    if not step.i < CountRequest.model_validate(run.plan).upto:
        raise ValueError("not a step of this run")
    return Added(value=step.i + 1)


routes = RouteSet("throwaway")


class NoteBody(RouteBody):
    text: str = Field(min_length=1, max_length=100, description="The note to store.")


class NoteParams(RouteParams):
    note_id: str = Field(pattern=r"^[0-9a-f]{32}$", description="The id a POST answered with.")
    upper: bool = Field(False, description="Answer the text in upper case.")


class Note(ToolOutput):
    note_id: str
    text: str


@routes.route("POST", "throwaway/notes", name="throwaway_create_note", status=201, response=Note)
async def create_note(call: RouteCall, *, body: NoteBody) -> Answer:
    """Store a note (test capability).

    Answers 201 with the note and its Location.
    """
    notes = await call.deps.cosmos.container(NOTES.name)
    note_id = uuid.uuid4().hex
    await notes.create({"id": note_id, "workspace_id": call.principal.workspace_id, "text": body.text})
    return Answer(Note(note_id=note_id, text=body.text), 201, {"Location": f"/api/throwaway/notes/{note_id}"})


@routes.route("GET", "throwaway/notes/{note_id}", name="throwaway_get_note", errors=(404,))
async def get_note(call: RouteCall, *, params: NoteParams) -> Note:
    """Read a note of your workspace (test capability); another workspace's id is 404."""
    notes = await call.deps.cosmos.container(NOTES.name)
    doc = await notes.get(params.note_id, call.principal.workspace_id, what="note")
    return Note(note_id=doc["id"], text=doc["text"].upper() if params.upper else doc["text"])


async def _probe(deps: Deps) -> str:
    return f"greeting is {deps.settings.section(ThrowawaySettings).greeting!r}"


CAPABILITY = Capability(
    name="throwaway",
    summary="A capability that exists only in a test module.",
    toolset=toolset,
    routes=routes,
    settings=ThrowawaySettings,
    containers=(NOTES,),
    orchestrations=(
        Orchestration(
            ORCHESTRATOR,
            _count,
            {ADD_ACTIVITY: ActivitySpec(_add, input=Step, output=Added)},
            CountRequest,
            _validate,
            "Adds 1..upto, one activity per number.",
        ),
    ),
    checks=(Check("throwaway", "The throwaway capability's settings are read.", _probe),),
)
