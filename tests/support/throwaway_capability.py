"""A throwaway capability, declared entirely in this test module: settings, a container, two tools, an
orchestration with an activity, a check, and REST routes of every kind (JSON, a raw body with its own limit,
a file answer, one that starts a run). tests/fixtures/plugin_app serves the app's capabilities
plus this one, to show that a capability plugs in without a line changed anywhere else."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Generator
from typing import Any

from pydantic import BaseModel, Field

from shared.core.settings import Settings, SettingsSection
from shared.storage.containers import ContainerSpec
from shared.tools.capability import ActiveRun, ActivitySpec, Capability, Orchestration, RunContext
from shared.tools.checks import Check
from shared.tools.deps import Deps
from shared.tools.invoke import ToolContext
from shared.tools.registry import ToolInput, ToolOutput, ToolSet
from shared.tools.routes import Answer, FileAnswer, RawBody, RouteBody, RouteCall, RouteParams, RouteSet

ORCHESTRATOR = "throwaway_count_orchestrator"
ADD_ACTIVITY = "throwaway_add"


class ThrowawaySettings(SettingsSection):
    env_prefix = "throwaway_"

    greeting: str = Field("hello", description="What throwaway_note answers with.")
    max_file_bytes: int = Field(64, ge=1, description="The largest body POST /api/throwaway/files takes.")


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


class FileParams(RouteParams):
    name: str = Field(pattern=r"^[a-z0-9_-]{1,40}\.txt$", description="The file's name (name.txt).")


class StoredFile(ToolOutput):
    name: str
    size_bytes: int
    content_type: str = Field(description="The Content-Type the upload was sent with.")
    sha256: str


class CountBody(RouteBody):
    upto: int = Field(ge=1, le=5, description="How many activities to run.")


def _file_limit(settings: Settings) -> int:
    return settings.section(ThrowawaySettings).max_file_bytes


def _file_blob(call: RouteCall, name: str) -> str:
    return f"throwaway/{call.principal.workspace_id}/{name}"


@routes.route(
    "POST",
    "throwaway/files/{name}",
    name="throwaway_put_file",
    status=201,
    response=StoredFile,
    accepts=("text/plain", "application/octet-stream"),
    body_limit=_file_limit,
)
async def put_file(call: RouteCall, *, params: FileParams, body: RawBody) -> Answer:
    """Store a small file as sent (test capability): at most FIREBREAK_THROWAWAY_MAX_FILE_BYTES bytes."""
    await call.deps.blobs.put(_file_blob(call, params.name), body.data)
    stored = StoredFile(
        name=params.name,
        size_bytes=len(body.data),
        content_type=body.content_type,
        sha256=hashlib.sha256(body.data).hexdigest(),
    )
    return Answer(stored, 201, {"Location": f"/api/throwaway/files/{params.name}"})


@routes.route("GET", "throwaway/files/{name}", name="throwaway_get_file", errors=(404,), serves=("text/plain",))
async def get_file(call: RouteCall, *, params: FileParams) -> FileAnswer:
    """Download a file of your workspace as an attachment (test capability); another workspace's is 404."""
    from shared.core.errors import NotFound

    data = await call.deps.blobs.get(_file_blob(call, params.name))
    if data is None:
        raise NotFound(f"No file {params.name}")
    headers = {"Content-Disposition": f'attachment; filename="{params.name}"', "X-Content-Type-Options": "nosniff"}
    return FileAnswer(data, "text/plain", headers)


@routes.route("POST", "throwaway/counts", name="throwaway_start_count", status=202, response=CountStarted, runs=True)
async def start_count(call: RouteCall, *, body: CountBody) -> Answer:
    """Start the throwaway orchestration as a run of the caller (test capability): 202 with its status URL."""
    started = await call.runs().start(
        ORCHESTRATOR, call.principal, {"upto": body.upto}, correlation_id=call.correlation_id
    )
    answer = CountStarted(run_id=started.run_id, status_url=started.status_url)
    return Answer(answer, 202, {"Location": started.status_url, "Retry-After": "1"})


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
