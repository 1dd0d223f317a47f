"""Drive Durable orchestrations the way the Durable extension does for an out-of-process Python worker.

Each episode hands the orchestrator its history (old events, then `OrchestratorStarted` and the new
ones) and gets back its state: done or not, output, custom status, actions. The replay itself is the
SDK's: `Orchestrator(fn).handle(context)` on the generator DFApp registered, exactly what the function
DFApp registers does, so orchestrator semantics are never re-implemented here. After the replay the
context's `open_tasks` says which task ids are pending and what each is (activity, timer, retry timer,
sub-orchestration, external event); the engine schedules the ones it has not scheduled yet, persists,
runs them, and appends their results as history events under the ids the SDK chose.
"""

from __future__ import annotations

import asyncio
import json
import logging
import traceback
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from devhost.durable import history as h
from devhost.durable.instances import Instance, InstanceStore
from devhost.index import FunctionInfo

log = logging.getLogger("devhost.durable")

_OUT_OF_PROC_LABEL = "\n\n$OutOfProcData$:"
_REPLAY_SCHEMA = 1  # V2: compound WhenAll/WhenAny actions, as the 2.x extension negotiates
_ACTIVITY, _ACTIVITY_RETRY, _SUB, _SUB_RETRY, _CONTINUE_AS_NEW, _TIMER, _WAIT_EVENT = 0, 1, 2, 3, 4, 5, 6


class UnknownFunction(LookupError):
    pass


class InjectedFault(RuntimeError):
    """An activity attempt failed on purpose (DEVHOST_FAIL_ACTIVITY), before the function ran."""


def parse_fail_activities(spec: str | None) -> dict[str, int]:
    """DEVHOST_FAIL_ACTIVITY: `name:N[,name:N...]` (N failing attempts of activity `name` per instance)."""
    found: dict[str, int] = {}
    for part in (spec or "").split(","):
        if not part.strip():
            continue
        name, sep, count = part.strip().rpartition(":")
        if not sep or not name or not count.isdigit():
            raise ValueError(f"DEVHOST_FAIL_ACTIVITY: {part.strip()!r} is not name:N")
        found[name] = int(count)
    return found


class InstanceGone(RuntimeError):
    """The instance exists but has finished: management calls answer 410 as Azure does."""


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _flatten_actions(actions: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for a in actions or []:
        if isinstance(a, list):
            out += _flatten_actions(a)
        elif isinstance(a, dict):
            out.append(a)
            out += _flatten_actions(a.get("compoundActions"))
    return out


def retry_delay(options: dict[str, Any], failed_attempts: int) -> timedelta:
    """first * backoff^(n-1), capped by the max interval (the extension's formula)."""
    first = float(options.get("firstRetryIntervalInMilliseconds", 1000))
    coefficient = float(options.get("backoffCoefficient", 1.0) or 1.0)
    delay = first * coefficient ** max(failed_attempts - 1, 0)
    cap = options.get("maxRetryIntervalInMilliseconds")
    if cap:
        delay = min(delay, float(cap))
    return timedelta(milliseconds=delay)


class DurableEngine:
    """Orchestrations of one task hub: start, replay, run activities and timers, persist, recover."""

    def __init__(
        self,
        functions: list[FunctionInfo],
        store: InstanceStore,
        *,
        hub: str,
        max_activities: int = 10,
        clock: Callable[[], datetime] = _utcnow,
        fail_activities: Mapping[str, int] | None = None,
    ) -> None:
        """`fail_activities` (fault injection, DEVHOST_FAIL_ACTIVITY): activity name -> how many of its first
        attempts in each instance fail before the function is called, so tests can drive the real retry path."""
        self.hub = hub
        self.store = store
        self.clock = clock
        self.orchestrators: dict[str, Any] = {}
        self.activities: dict[str, FunctionInfo] = {}
        for info in functions:
            kind = info.trigger["type"]
            if kind == "orchestrationTrigger":
                self.orchestrators[info.name] = info.user_function
            elif kind == "activityTrigger":
                self.activities[info.name] = info
        self._cache: dict[str, Instance] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._driving: dict[str, asyncio.Task[None]] = {}
        self._work: set[asyncio.Task[Any]] = set()
        self._activity_slots = asyncio.Semaphore(max_activities)
        self._changed = asyncio.Condition()
        self._fail_activities = dict(fail_activities or {})
        self._failed_attempts: dict[tuple[str, str], int] = {}

    # ---- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Resume every instance that was running when the host stopped."""
        for inst in await self.store.load_all():
            self._cache[inst.instance_id] = inst
        for inst in list(self._cache.values()):
            if inst.terminal:
                continue
            for task_id, entry in list(inst.pending.items()):
                self._dispatch(inst, int(task_id), entry)
            self._kick(inst.instance_id)
        resumed = sum(1 for i in self._cache.values() if not i.terminal)
        if resumed:
            log.info("resumed durable instances", extra={"instances": resumed, "hub": self.hub})

    async def stop(self) -> None:
        for task in list(self._work) + list(self._driving.values()):
            task.cancel()
        await asyncio.gather(*self._work, *self._driving.values(), return_exceptions=True)
        await self.store.close()

    # ---- client operations (what DurableOrchestrationClient reaches over HTTP) -------------

    async def start_new(
        self, name: str, instance_id: str | None, input_json: str | None, *, parent: dict[str, Any] | None = None
    ) -> Instance:
        if name not in self.orchestrators:
            raise UnknownFunction(name)
        instance_id = instance_id or uuid.uuid4().hex
        now = h.iso(self.clock())
        inst = Instance(
            instance_id=instance_id,
            name=name,
            status="Pending",
            input=input_json,
            created=now,
            updated=now,
            parent=parent,
        )
        async with self._lock(instance_id):
            old = self._cache.get(instance_id) or await self.store.load(instance_id)
            if old is not None and not old.terminal:
                # Azure replaces an existing instance silently; a running one is overwritten too.
                log.warning("replacing running instance %s", instance_id)
            self._cache[instance_id] = inst
            await self.store.save(inst)
        self._kick(instance_id)
        return inst

    async def get(self, instance_id: str) -> Instance | None:
        return self._cache.get(instance_id) or await self.store.load(instance_id)

    async def query(self) -> list[Instance]:
        stored = {i.instance_id: i for i in await self.store.load_all()}
        stored.update(self._cache)
        return sorted(stored.values(), key=lambda i: i.created)

    async def raise_event(self, instance_id: str, name: str, data_json: str | None) -> None:
        inst = await self._require(instance_id)
        if inst.terminal:
            raise InstanceGone(instance_id)
        await self._deliver(instance_id, None, h.event(h.EVENT_RAISED, self.clock(), Name=name, Input=data_json))

    async def terminate(self, instance_id: str, reason: str | None) -> None:
        inst = await self._require(instance_id)
        async with self._lock(instance_id):
            if inst.terminal:
                raise InstanceGone(instance_id)
            inst.history.append(h.event(h.EXECUTION_TERMINATED, self.clock(), Input=json.dumps(reason)))
            inst.status, inst.output, inst.pending, inst.inbox = "Terminated", reason, {}, []
            await self._save(inst)
        await self._notify_parent(inst)

    async def purge(self, instance_id: str) -> bool:
        inst = await self.get(instance_id)
        if inst is None or not inst.terminal:
            return False
        self._cache.pop(instance_id, None)
        return await self.store.delete(instance_id)

    # The timeout is part of the call, as in the Durable client's wait_for_completion_or_create_check_status_response.
    async def wait_for(self, instance_id: str, timeout: float) -> Instance | None:  # noqa: ASYNC109  # see above
        """Wait until the instance is terminal (in-process callers; HTTP callers poll the status URL)."""

        def done() -> bool:
            inst = self._cache.get(instance_id)
            return inst is not None and inst.terminal

        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(done), timeout)
        return self._cache.get(instance_id)

    # ---- episodes ---------------------------------------------------------------------------

    def _lock(self, instance_id: str) -> asyncio.Lock:
        return self._locks.setdefault(instance_id, asyncio.Lock())

    async def _require(self, instance_id: str) -> Instance:
        inst = await self.get(instance_id)
        if inst is None:
            raise KeyError(instance_id)
        self._cache.setdefault(instance_id, inst)
        return self._cache[instance_id]

    @staticmethod
    def _needs_episode(inst: Instance) -> bool:
        return not inst.terminal and (not inst.history or bool(inst.inbox))

    def _kick(self, instance_id: str) -> None:
        if instance_id not in self._driving:
            self._driving[instance_id] = asyncio.get_running_loop().create_task(self._drive(instance_id))

    async def _drive(self, instance_id: str) -> None:
        try:
            while True:
                async with self._lock(instance_id):
                    inst = self._cache.get(instance_id)
                    if inst is None or not self._needs_episode(inst):
                        # No await between this check and leaving `_driving`: a delivery that lands
                        # after it starts a new driver instead of being missed.
                        break
                    await self._episode(inst)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            # A fault of this host, not of the orchestrator: fail the instance visibly instead of leaving it Pending.
            log.exception("durable engine failed on instance %s", instance_id)
            inst = self._cache.get(instance_id)
            if inst is not None and not inst.terminal:
                self._fail(inst, f"offline host error: {type(exc).__name__}: {exc}")
                await self._save(inst)
        finally:
            self._driving.pop(instance_id, None)

    async def _episode(self, inst: Instance) -> None:
        now = self.clock()
        consumed = len(inst.inbox)
        new_events = list(inst.inbox)
        if not inst.history:
            parent = inst.parent or {}
            new_events.insert(
                0,
                h.event(
                    h.EXECUTION_STARTED,
                    now,
                    Name=inst.name,
                    Input=inst.input,
                    Version="",
                    ParentInstanceId=parent.get("instance_id"),
                ),
            )
        episode = [h.event(h.ORCHESTRATOR_STARTED, now), *new_events]
        # The orchestrator sees the old events as played; the stored history keeps them as recorded.
        body = json.dumps(
            {
                "history": [dict(ev, IsPlayed=True) for ev in inst.history] + episode,
                "instanceId": inst.instance_id,
                "isReplaying": bool(inst.history),
                "parentInstanceId": (inst.parent or {}).get("instance_id"),
                "input": inst.input,
                "upperSchemaVersion": _REPLAY_SCHEMA,
            }
        )
        handle = self.orchestrators.get(inst.name)
        state: dict[str, Any] | None
        error: str | None
        open_tasks: dict[Any, Any]
        if handle is None:
            state, error, open_tasks = (
                None,
                f"The function '{inst.name}' doesn't exist or is not an orchestrator function.",
                {},
            )
        else:
            # Orchestrator code is synchronous and may be slow to replay; keep it off the event loop.
            state, error, open_tasks = await asyncio.get_running_loop().run_in_executor(None, _replay, handle, body)

        inst.history = inst.history + episode
        inst.inbox = inst.inbox[consumed:]
        inst.status = "Running"
        if state is not None and "customStatus" in state:
            inst.custom_status = state.get("customStatus")

        if error is not None:
            self._fail(inst, error)
        elif state and state.get("isDone"):
            continue_as_new = next(
                (a for a in _flatten_actions(state.get("actions")) if a.get("actionType") == _CONTINUE_AS_NEW), None
            )
            if continue_as_new is not None:
                self._continue_as_new(inst, continue_as_new)
            else:
                inst.status, inst.output = "Completed", state.get("output")
                inst.history.append(
                    h.event(
                        h.EXECUTION_COMPLETED,
                        self.clock(),
                        Result=json.dumps(inst.output),
                        OrchestrationStatus="Completed",
                    )
                )
        else:
            unsupported = self._schedule(inst, open_tasks)
            if unsupported:
                self._fail(inst, unsupported)
        if inst.history:
            inst.history.append(h.event(h.ORCHESTRATOR_COMPLETED, self.clock()))
        await self._save(inst)
        if inst.terminal:
            await self._notify_parent(inst)
        for task_id, entry in list(inst.pending.items()):
            if not entry.get("dispatched"):
                entry["dispatched"] = True
                self._dispatch(inst, int(task_id), entry)

    def _fail(self, inst: Instance, error: str) -> None:
        inst.status = "Failed"
        inst.output = f"Orchestrator function '{inst.name}' failed: {error}"
        inst.failure = {"message": error}
        inst.pending = {}
        inst.history.append(
            h.event(h.EXECUTION_COMPLETED, self.clock(), Result=json.dumps(inst.output), OrchestrationStatus="Failed")
        )

    def _continue_as_new(self, inst: Instance, action: dict[str, Any]) -> None:
        # A new generation: empty history and the new input; `_drive` runs it next (no history = needs an episode).
        new_input = action.get("input")
        inst.input = new_input if isinstance(new_input, str) or new_input is None else json.dumps(new_input)
        inst.history, inst.inbox, inst.pending = [], [], {}

    def _schedule(self, inst: Instance, open_tasks: dict[Any, Any]) -> str | None:
        """Record and queue every open task the engine has not scheduled yet; returns a failure reason or None."""
        now = self.clock()
        for key in sorted((k for k in open_tasks if isinstance(k, int)), key=int):
            if str(key) in inst.pending:
                continue
            tasks = open_tasks[key]
            task = tasks[-1] if isinstance(tasks, list) else tasks
            entry = self._entry_for(task, now)
            if entry is None:
                action = getattr(task, "action_repr", None)
                return f"action {type(action).__name__} is not supported by the offline host"
            inst.pending[str(key)] = entry
            if entry["kind"] == "activity":
                inst.history.append(h.event(h.TASK_SCHEDULED, now, key, Name=entry["name"], Input=entry["input"]))
            elif entry["kind"] == "timer":
                inst.history.append(h.event(h.TIMER_CREATED, now, key, FireAt=entry["fire_at"]))
            else:
                entry["child_id"] = entry.get("child_id") or f"{inst.instance_id}:{key}"
                inst.history.append(
                    h.event(
                        h.SUB_ORCHESTRATION_CREATED,
                        now,
                        key,
                        Name=entry["name"],
                        InstanceId=entry["child_id"],
                        Input=entry["input"],
                    )
                )
        return None

    def _entry_for(self, task: Any, now: datetime) -> dict[str, Any] | None:
        from azure.durable_functions.models.actions.NoOpAction import NoOpAction

        action = task.action_repr
        parent = getattr(task, "parent", None)
        if isinstance(action, NoOpAction):
            if parent is None or not hasattr(parent, "retry_options"):
                return None
            # The SDK's retry protocol: after a failure a timer, after the timer a rescheduled attempt.
            if parent.is_waiting_on_timer:
                delay = retry_delay(parent.retry_options.to_json(), parent.num_attempts)
                return {"kind": "timer", "fire_at": h.iso(now + delay)}
            return self._entry_from_action(parent.actions.to_json(), now)
        return self._entry_from_action(action.to_json() if hasattr(action, "to_json") else {}, now)

    @staticmethod
    def _entry_from_action(action: dict[str, Any], now: datetime) -> dict[str, Any] | None:
        kind = action.get("actionType")
        payload = action.get("input")
        if payload is not None and not isinstance(payload, str):
            payload = json.dumps(payload)
        if kind in (_ACTIVITY, _ACTIVITY_RETRY):
            return {"kind": "activity", "name": action["functionName"], "input": payload}
        if kind == _TIMER:
            return {"kind": "timer", "fire_at": action["fireAt"]}
        if kind in (_SUB, _SUB_RETRY):
            return {
                "kind": "suborchestration",
                "name": action["functionName"],
                "input": payload,
                "child_id": action.get("instanceId"),
            }
        return None

    # ---- running scheduled work ----------------------------------------------------------------

    def _dispatch(self, inst: Instance, task_id: int, entry: dict[str, Any]) -> None:
        runner = {"activity": self._run_activity, "timer": self._run_timer, "suborchestration": self._run_child}[
            entry["kind"]
        ]
        task = asyncio.get_running_loop().create_task(runner(inst.instance_id, task_id, entry))
        self._work.add(task)
        task.add_done_callback(self._work.discard)

    async def _run_activity(self, instance_id: str, task_id: int, entry: dict[str, Any]) -> None:
        name = entry["name"]
        async with self._activity_slots:
            info = self.activities.get(name)
            try:
                if info is None:
                    raise LookupError(
                        f"The function '{name}' doesn't exist, is disabled, or is not an activity function."
                    )
                self._inject_fault(instance_id, name)
                result_json = await invoke_activity(info, entry["input"])
                ev = h.event(h.TASK_COMPLETED, self.clock(), TaskScheduledId=task_id, Result=result_json)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                ev = h.event(
                    h.TASK_FAILED,
                    self.clock(),
                    TaskScheduledId=task_id,
                    Reason=f"Activity function '{name}' failed: {type(exc).__name__}: {exc}",
                    Details=json.dumps(
                        {"type": type(exc).__name__, "message": str(exc), "stackTrace": traceback.format_exc(limit=8)}
                    ),
                )
        await self._deliver(instance_id, task_id, ev)

    def _inject_fault(self, instance_id: str, name: str) -> None:
        """Fail this attempt when DEVHOST_FAIL_ACTIVITY asks for more failures of `name` in this instance."""
        wanted = self._fail_activities.get(name, 0)
        done = self._failed_attempts.get((instance_id, name), 0)
        if done < wanted:
            self._failed_attempts[(instance_id, name)] = done + 1
            log.warning("injected failure %d of %d of activity %s (%s)", done + 1, wanted, name, instance_id)
            raise InjectedFault(f"injected by DEVHOST_FAIL_ACTIVITY: attempt {done + 1} of {wanted} fails")

    async def _run_timer(self, instance_id: str, task_id: int, entry: dict[str, Any]) -> None:
        from dateutil.parser import isoparse

        fire_at = isoparse(entry["fire_at"])
        if fire_at.tzinfo is None:
            fire_at = fire_at.replace(tzinfo=UTC)
        delay = (fire_at - self.clock()).total_seconds()
        if delay > 0:
            await asyncio.sleep(delay)
        await self._deliver(
            instance_id, task_id, h.event(h.TIMER_FIRED, self.clock(), TimerId=task_id, FireAt=entry["fire_at"])
        )

    async def _run_child(self, instance_id: str, task_id: int, entry: dict[str, Any]) -> None:
        child_id = entry["child_id"]
        existing = await self.get(child_id)
        if existing is not None and existing.parent and existing.parent.get("instance_id") == instance_id:
            if existing.terminal:  # finished while the parent's notification was lost to a restart
                await self._notify_parent(existing)
            return
        if entry["name"] not in self.orchestrators:
            await self._deliver(
                instance_id,
                task_id,
                h.event(
                    h.SUB_ORCHESTRATION_FAILED,
                    self.clock(),
                    TaskScheduledId=task_id,
                    Reason=f"The function '{entry['name']}' doesn't exist or is not an orchestrator function.",
                    Details=None,
                ),
            )
            return
        await self.start_new(
            entry["name"], child_id, entry["input"], parent={"instance_id": instance_id, "task_id": task_id}
        )

    async def _notify_parent(self, child: Instance) -> None:
        if not child.parent:
            return
        task_id = child.parent["task_id"]
        if child.status == "Completed":
            ev = h.event(
                h.SUB_ORCHESTRATION_COMPLETED, self.clock(), TaskScheduledId=task_id, Result=json.dumps(child.output)
            )
        else:
            ev = h.event(
                h.SUB_ORCHESTRATION_FAILED,
                self.clock(),
                TaskScheduledId=task_id,
                Reason=str(child.output),
                Details=json.dumps(child.failure),
            )
        await self._deliver(child.parent["instance_id"], task_id, ev)

    async def _deliver(self, instance_id: str, task_id: int | None, ev: dict[str, Any]) -> None:
        """Append a result to the instance's inbox (durably) and wake it; dropped if the instance has ended."""
        async with self._lock(instance_id):
            inst = self._cache.get(instance_id) or await self.store.load(instance_id)
            if inst is None or inst.terminal:
                return
            self._cache[instance_id] = inst
            if task_id is not None:
                if str(task_id) not in inst.pending:
                    return  # a duplicate answer (e.g. re-run after a restart): the first one counted
                inst.pending.pop(str(task_id))
            inst.inbox.append(ev)
            await self._save(inst)
        self._kick(instance_id)

    async def _save(self, inst: Instance) -> None:
        inst.updated = h.iso(self.clock())
        await self.store.save(inst)
        async with self._changed:
            self._changed.notify_all()


def _replay(handle: Any, body: str) -> tuple[dict[str, Any] | None, str | None, dict[Any, Any]]:
    """One replay through the SDK: the same steps as the function `DFApp.orchestration_trigger` registers."""
    from azure.durable_functions.models.DurableOrchestrationContext import DurableOrchestrationContext
    from azure.durable_functions.orchestrator import Orchestrator

    context = DurableOrchestrationContext.from_json(body)
    context._input_expected_type = getattr(handle, "_df_input_type", None)
    try:
        return json.loads(Orchestrator(handle.orchestrator_function).handle(context)), None, dict(context.open_tasks)
    except Exception as exc:
        message = str(exc)
        if _OUT_OF_PROC_LABEL in message:
            error, _, data = message.partition(_OUT_OF_PROC_LABEL)
            return json.loads(data), error, {}
        return None, message or type(exc).__name__, {}


async def invoke_activity(info: FunctionInfo, input_json: str | None) -> str:
    """Call an activity as the worker does: decode with the activity-trigger converter, encode the return value."""
    import inspect

    from azure.functions import meta
    from azure.functions.durable_functions import ActivityTriggerConverter

    value = (
        None
        if input_json is None
        else ActivityTriggerConverter.decode(meta.Datum(type="json", value=input_json), trigger_metadata=None)
    )
    fn = info.user_function
    kwargs = {info.trigger["name"]: value}
    if inspect.iscoroutinefunction(fn):
        result = await fn(**kwargs)
    else:
        result = await asyncio.get_running_loop().run_in_executor(None, lambda: fn(**kwargs))
        if inspect.isawaitable(result):
            result = await result
    encoded: str = ActivityTriggerConverter.encode(result, expected_type=None).value
    return encoded
