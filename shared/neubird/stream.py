"""NeuBird's prompt stream (SSE) turned into investigation results: pure code, no I/O.

`SseParser` is fed the response body in chunks of any size (a UTF-8 character or a `\\r\\n` may be split across
chunks) and yields `SseEvent(name, data)`, one per `data:` line holding a JSON object (contract section 5.2).
`Aggregator` folds events into a `TurnState`: the spec's `investigation_results` plus what progress reporting
needs (session name, latest status text, step counts, the current step, errors, whether the turn ended).
`state_from_prompt_cycle` builds the same `TurnState` from an inspect response's prompt cycle, so a status read
through inspect and one read from the stream agree.

Behaviour the contract marks as inference, and that this module follows:
- [INF] `result` is unwrapped whenever the top level has a `result` object and no `message`.
- [INF] the end of the turn is `end_turn: true` or `status: "STATUS_DONE"`, on the message or at the top level.
- [INF] in snapshot mode with `is_delta` true only the active step's `investigation` is a fragment.
- [GAP, chosen here] a step counts as completed when its status (`cot_status` first) contains COMPLETED or
  DONE. A late `cot_end` for an older step (one arriving after the next `cot_start`) does not move the current
  step back and adds no text (the CLI ignores it); only its status and sources_involved are applied to that
  older step, so the completed count agrees with inspect. A late `cot_end` for a step never started is ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from shared.core.html_unescape import unescape

MAX_LINE_BYTES = 1024 * 1024
# Text kept per chain-of-thought step and for the answer: what an agent can read; the rest is dropped.
MAX_STEP_CHARS = 64 * 1024
MAX_ANSWER_CHARS = 256 * 1024

# Content types (contract 5.4).
PROGRESS_STATUS = "CONTENT_TYPE_PROGRESS_STATUS"
SOURCES = "CONTENT_TYPE_SOURCES"
CHAIN_OF_THOUGHT = "CONTENT_TYPE_CHAIN_OF_THOUGHT"
CHAT_RESPONSE = "CONTENT_TYPE_CHAT_RESPONSE"
SESSION_NAME = "CONTENT_TYPE_SESSION_NAME"
FOLLOW_UP_SUGGESTIONS = "CONTENT_TYPE_FOLLOW_UP_SUGGESTIONS"
EXECUTION_TIME = "CONTENT_TYPE_EXECUTION_TIME"
ERROR_MESSAGE = "CONTENT_TYPE_ERROR_MESSAGE"

# What a source is (contract 4.7): every other field of one is dropped.
SOURCE_FIELDS = ("id", "title", "description", "category")

# Bounds on what one turn may accumulate (the response cap bounds the bytes; these bound the lists).
_MAX_SOURCES = 500
_MAX_STEPS = 500
_MAX_ERRORS = 20
_MAX_HISTORY = 50
_MAX_SUGGESTIONS = 50
_ERROR_CHARS = 500
_PLACEHOLDERS = frozenset({"in progress...", "investigating...", "analyzing...", "thinking..."})


class SseLineTooLong(Exception):
    """A line of the stream passed the parser's limit (the CLI fails the stream the same way)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"a line of the NeuBird stream passed {limit} bytes without a line break")
        self.limit = limit


@dataclass(frozen=True)
class SseEvent:
    """One `data:` line: `name` is the current `event:` name ("message" by default), `data` the JSON object."""

    name: str
    data: dict[str, Any]


class SseParser:
    """Incremental SSE framing (contract 5.2). Feed bytes with `feed`, then call `close` at the end of the body.

    Lines end with `\\n` or `\\r\\n`. The event name resets to "message" after a blank line; comment lines (`:`),
    `id:`, `retry:` and unknown fields are ignored; `data:` with or without a space; each data line is one JSON
    document on its own (lines are never joined); `[DONE]`, `:keepalive`, non-JSON data and JSON that is not an
    object are skipped. A line longer than `max_line_bytes` raises `SseLineTooLong` as soon as the buffered part
    passes the limit, so memory stays bounded.
    """

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self._limit = max_line_bytes
        self._buffer = bytearray()
        self._name = "message"

    def feed(self, chunk: bytes) -> list[SseEvent]:
        events: list[SseEvent] = []
        if not chunk:
            return events
        self._buffer += chunk
        start = 0
        while (end := self._buffer.find(b"\n", start)) != -1:
            line = bytes(self._buffer[start:end])
            start = end + 1
            if len(line) > self._limit + 1:  # +1: a \r before the \n
                self._buffer.clear()
                raise SseLineTooLong(self._limit)
            if (event := self._line(line)) is not None:
                events.append(event)
        del self._buffer[:start]
        if len(self._buffer) > self._limit:
            self._buffer.clear()
            raise SseLineTooLong(self._limit)
        return events

    def close(self) -> list[SseEvent]:
        """The last line when the body ended without a line break."""
        if not self._buffer:
            return []
        line = bytes(self._buffer)
        self._buffer.clear()
        event = self._line(line)
        return [event] if event is not None else []

    def _line(self, raw: bytes) -> SseEvent | None:
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if not raw.strip():
            self._name = "message"
            return None
        line = raw.decode("utf-8", errors="replace")
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.strip()
        if name == "event":
            self._name = value or "message"
            return None
        if name != "data" or value in ("", "[DONE]", ":keepalive"):
            return None
        try:
            data = json.loads(value)
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser's stack
            return None
        return SseEvent(self._name, data) if isinstance(data, dict) else None


def parse_chunks(chunks: Iterable[bytes], max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[SseEvent]:
    """Every event of a body given as chunks (tests, replays)."""
    parser = SseParser(max_line_bytes)
    for chunk in chunks:
        yield from parser.feed(chunk)
    yield from parser.close()


# --- payload helpers -----------------------------------------------------------------------------------------


def unwrap(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The payload without gRPC-gateway's `{"result": {...}}` wrapping [INF: unwrapped when there is no message]."""
    inner = data.get("result")
    if isinstance(inner, Mapping) and "message" not in data:
        return inner
    return data


def is_delta(value: Any) -> bool:
    """`metadata.is_delta`: true only for the boolean true or the string "true"."""
    return value is True or value == "true"


def is_end_of_turn(data: Mapping[str, Any]) -> bool:
    """The event closes the turn: `end_turn: true` or `status: "STATUS_DONE"` (on the message or the top level)."""
    payload = unwrap(data)
    message = payload.get("message")
    for holder in (message if isinstance(message, Mapping) else {}, payload):
        if holder.get("end_turn") is True or holder.get("status") == "STATUS_DONE":
            return True
    return False


_BREAK = re.compile(r"<\s*br\s*/?\s*>|<\s*/\s*(?:p|div|li|tr|h[1-6])\s*>", re.IGNORECASE)
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_BLANK_LINES = re.compile(r"\n{3,}")


def strip_html(text: str) -> str:
    """Answer text without HTML: `<br>` and block ends become line breaks, other tags go, entities are decoded.

    Only tag-shaped text is removed, so markdown such as `latency < 2s` survives.
    """
    text = _BREAK.sub("\n", text.replace("\r\n", "\n"))
    text = unescape(_TAG.sub("", text)).replace("\xa0", " ")
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return _BLANK_LINES.sub("\n\n", text).strip()


def _json_part(part: Any) -> dict[str, Any] | None:
    if isinstance(part, Mapping):
        return dict(part)
    if not isinstance(part, str):
        return None
    try:
        value = json.loads(part)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


_COUNT = re.compile(r"\d+")


def _status_key(text: str) -> str:
    """Progress texts equal after normalising counts ("Found 9 results" ~ "Found 12 results")."""
    return _COUNT.sub("N", " ".join(text.split()).lower())


def _milliseconds(text: str) -> int | None:
    try:
        return int(float(text.strip()))
    except ValueError:
        return None


def _completed(status: str | None) -> bool:
    return bool(status) and ("COMPLETED" in str(status) or str(status).endswith("DONE"))


def _in_progress(status: str | None) -> bool:
    return bool(status) and str(status).endswith("IN_PROGRESS")


# --- results -------------------------------------------------------------------------------------------------


@dataclass
class Step:
    """One chain-of-thought step as accumulated so far."""

    id: str
    description: str = ""
    explanation: str = ""
    investigation: str = ""
    category: str | None = None
    status: str | None = None
    sources_involved: list[str] = field(default_factory=list)
    # Streamed fragments, joined once in `text()`: appending to a str attribute copies it every time, which
    # made a long delta stream quadratic. Capped at MAX_STEP_CHARS (the rest is dropped).
    parts: list[str] = field(default_factory=list, repr=False, compare=False)
    parts_length: int = field(default=0, repr=False, compare=False)

    def append(self, text: str) -> None:
        room = MAX_STEP_CHARS - len(self.investigation) - self.parts_length
        if room > 0 and text:
            self.parts.append(text[:room])
            self.parts_length += min(len(text), room)

    def text(self) -> str:
        return self.investigation + "".join(self.parts)

    def has_text(self) -> bool:
        return bool(self.investigation) or self.parts_length > 0

    @property
    def completed(self) -> bool:
        return _completed(self.status)

    def to_dict(self) -> dict[str, Any]:
        """The spec's shape: {description, investigation, category?, status?, sources_involved?}."""
        out: dict[str, Any] = {"description": self.description, "investigation": self.investigation.strip()}
        if self.category:
            out["category"] = self.category
        if self.status:
            out["status"] = self.status
        if self.sources_involved:
            out["sources_involved"] = list(self.sources_involved)
        return out

    def update(self, part: Mapping[str, Any], *, investigation: bool = True) -> None:
        """Take the metadata fields `part` carries (and its full `investigation` text when `investigation`)."""
        for name in ("description", "explanation"):
            if isinstance(value := part.get(name), str) and value:
                setattr(self, name, value)
        if isinstance(category := part.get("category"), str) and category:
            self.category = category
        status = part.get("cot_status") or part.get("status")
        if isinstance(status, str) and status:
            self.status = status
        if isinstance(part.get("sources_involved"), list):
            self.sources_involved = _strings(part["sources_involved"])[:_MAX_SOURCES]
        text = part.get("investigation")
        if investigation and isinstance(text, str) and text.strip().lower() not in _PLACEHOLDERS:
            self.investigation, self.parts, self.parts_length = text[:MAX_STEP_CHARS], [], 0


@dataclass(frozen=True)
class InvestigationResults:
    """The spec's `investigation_results`."""

    final_answer: str
    chain_of_thoughts: list[dict[str, Any]]
    sources: list[dict[str, Any]]
    follow_up_suggestions: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "final_answer": self.final_answer,
            "chain_of_thoughts": [dict(s) for s in self.chain_of_thoughts],
            "sources": [dict(s) for s in self.sources],
            "follow_up_suggestions": list(self.follow_up_suggestions),
        }


@dataclass(frozen=True)
class TurnState:
    """Where one prompt turn stands: the results so far plus progress facts.

    `current_step` is the active step's description (its 1-based position is `current_step_number`);
    `progress_text` the latest progress status; `progress_history` the de-duplicated status texts in order;
    `errors` in-stream error texts (`error`, `response.error_message`); `ended` whether the turn's final event
    (or, from inspect, a finished prompt-cycle status) was seen.
    """

    results: InvestigationResults
    steps: tuple[Step, ...] = ()
    total_steps: int = 0
    completed_steps: int = 0
    current_step: str | None = None
    current_step_number: int | None = None
    session_name: str | None = None
    session_uuid: str | None = None
    message_id: str | None = None
    progress_text: str | None = None
    progress_history: tuple[str, ...] = ()
    execution_time_ms: int | None = None
    errors: tuple[str, ...] = ()
    ended: bool = False
    prompt_status: str | None = None

    @property
    def sources_consulted(self) -> int:
        return len(self.results.sources)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able (for orchestration history or a tool answer): the results plus every progress fact."""
        return {
            "investigation_results": self.results.to_dict(),
            "total_steps": self.total_steps,
            "completed_steps": self.completed_steps,
            "current_step": self.current_step,
            "current_step_number": self.current_step_number,
            "session_name": self.session_name,
            "session_uuid": self.session_uuid,
            "message_id": self.message_id,
            "progress_text": self.progress_text,
            "progress_history": list(self.progress_history),
            "execution_time_ms": self.execution_time_ms,
            "errors": list(self.errors),
            "ended": self.ended,
            "prompt_status": self.prompt_status,
        }


class Aggregator:
    """Folds `SseEvent`s into a `TurnState` (`state()`); `feed` returns True once the turn has ended."""

    def __init__(self) -> None:
        self._steps: dict[str, Step] = {}
        self._active: str | None = None  # delta mode: the step of the latest cot_start
        self._answer: list[str] = []
        self._answer_length = 0
        self._sources: dict[str, dict[str, Any]] = {}
        self._suggestions: list[str] = []
        self._history: list[str] = []
        self._history_keys: set[str] = set()
        self._progress: str | None = None
        self._errors: list[str] = []
        self._session_name: str | None = None
        self._session_uuid: str | None = None
        self._message_id: str | None = None
        self._execution_ms: int | None = None
        self._ended = False

    @property
    def ended(self) -> bool:
        return self._ended

    def feed_all(self, events: Iterable[SseEvent]) -> bool:
        for event in events:
            self.feed(event)
        return self._ended

    def feed(self, event: SseEvent) -> bool:
        payload = unwrap(event.data)
        if isinstance(sid := payload.get("session_uuid"), str) and sid:
            self._session_uuid = sid
        self._record_error(payload)
        message = payload.get("message")
        if isinstance(message, Mapping):
            if isinstance(mid := message.get("id"), str) and mid:
                self._message_id = mid
            content = message.get("content")
            if isinstance(content, Mapping):
                metadata = message.get("metadata") or payload.get("metadata")
                delta = is_delta(metadata.get("is_delta")) if isinstance(metadata, Mapping) else False
                parts = content.get("parts")
                self._content(
                    event.name, _text(content.get("content_type")), parts if isinstance(parts, list) else [], delta
                )
        if is_end_of_turn(payload):
            self._ended = True
        return self._ended

    # -- content types --

    def _content(self, name: str, content_type: str, parts: list[Any], delta: bool) -> None:
        texts = [p for p in parts if isinstance(p, str)]
        if content_type == PROGRESS_STATUS and texts and texts[0].strip():
            self._progress_text(texts[0].strip())
        elif content_type == SESSION_NAME and texts and texts[0].strip():
            self._session_name = texts[0].strip()
        elif content_type == SOURCES:
            for part in parts:
                self._source(part)
        elif content_type == CHAIN_OF_THOUGHT:
            if name in ("cot_start", "cot_delta", "cot_end"):
                self._cot_delta_mode(name, parts[0] if parts else None)
            else:
                self._cot_snapshot(parts, delta)
        elif content_type == CHAT_RESPONSE:
            self._chat(texts, delta)
        elif content_type == FOLLOW_UP_SUGGESTIONS:
            self._suggestions = [t.strip() for t in texts if t.strip()][:_MAX_SUGGESTIONS]
        elif content_type == EXECUTION_TIME and texts:
            self._execution_ms = _milliseconds(texts[0])
        # ERROR_MESSAGE (internal retry notes), visualisations, markers and unknown types: ignored.

    def _chat(self, texts: list[str], delta: bool) -> None:
        if not delta:
            whole = "\n".join(texts)[:MAX_ANSWER_CHARS]
            self._answer, self._answer_length = [whole], len(whole)
        elif texts and (room := MAX_ANSWER_CHARS - self._answer_length) > 0:
            self._answer.append(texts[0][:room])
            self._answer_length += min(len(texts[0]), room)

    def _progress_text(self, text: str) -> None:
        self._progress = text
        key = _status_key(text)
        if key not in self._history_keys and len(self._history) < _MAX_HISTORY:
            self._history_keys.add(key)
            self._history.append(text)

    def _source(self, part: Any) -> None:
        found = _json_part(part)
        if found is None:
            if not isinstance(part, str) or not part.strip():
                return
            found = {"title": part.strip()}
        # The documented fields only (contract 4.7), as text: nothing NeuBird adds reaches an answer.
        source: dict[str, Any] = {k: found[k] for k in SOURCE_FIELDS if isinstance(found.get(k), str) and found[k]}
        key = _text(source.get("id")) or _text(source.get("title"))
        if not key:
            return
        key = ("id:" if source.get("id") else "title:") + key
        if key in self._sources:
            self._sources[key].update({k: v for k, v in source.items() if v not in (None, "")})
        elif len(self._sources) < _MAX_SOURCES:
            self._sources[key] = source

    def _step(self, step_id: str) -> Step | None:
        step = self._steps.get(step_id)
        if step is None and len(self._steps) < _MAX_STEPS:
            step = self._steps[step_id] = Step(id=step_id)
        return step

    def _cot_delta_mode(self, name: str, part: Any) -> None:
        data = _json_part(part)
        if data is None:
            if name == "cot_delta" and isinstance(part, str) and self._active in self._steps:
                self._steps[self._active].append(part)
            return
        step_id = _text(data.get("id")) or self._active or f"step-{len(self._steps) + 1}"
        if name == "cot_start":
            self._active = step_id
            if (step := self._step(step_id)) is not None:
                step.update(data)
        elif name == "cot_delta":
            if (step := self._step(step_id)) is not None:
                step.update(data, investigation=False)
                fragment = data.get("investigation")
                if isinstance(fragment, str):
                    step.append(fragment)
            if self._active is None:
                self._active = step_id
        elif self._active in (step_id, None):
            if (step := self._step(step_id)) is not None:
                step.update(data, investigation=False)
        elif (older := self._steps.get(step_id)) is not None:
            # A late cot_end (after the next cot_start): the current step stays, the older step only gets its
            # final status and sources (so counts agree with inspect); anything else in it is ignored.
            older.update({k: data[k] for k in ("status", "cot_status", "sources_involved") if k in data})

    def _cot_snapshot(self, parts: Sequence[Any], delta: bool) -> None:
        steps = [(_json_part(p) or {}) for p in parts]
        ids = [_text(s.get("id")) or f"step-{i + 1}" for i, s in enumerate(steps)]
        # One snapshot names each step once; a part repeating an id (a hostile or broken stream) is dropped, so
        # one event cannot make a step's work repeat thousands of times.
        first: dict[str, int] = {}
        for i, step_id in enumerate(ids):
            first.setdefault(step_id, i)
        keep = sorted(first.values())
        steps, ids = [steps[i] for i in keep], [ids[i] for i in keep]
        active_index = next(
            (i for i, s in enumerate(steps) if _in_progress(_text(s.get("cot_status") or s.get("status")))),
            len(steps) - 1,
        )
        for i, (data, step_id) in enumerate(zip(steps, ids, strict=True)):
            if (step := self._step(step_id)) is None:
                continue
            fragment = delta and i == active_index
            # [INF] in delta snapshots only the active step's text is a fragment; others keep their text.
            step.update(data, investigation=not fragment and (not delta or not step.has_text()))
            text = data.get("investigation")
            if fragment and isinstance(text, str) and text.strip().lower() not in _PLACEHOLDERS:
                step.append(text)
        self._active = ids[active_index] if ids else self._active

    def _record_error(self, payload: Mapping[str, Any]) -> None:
        texts = []
        if isinstance(error := payload.get("error"), str) and error.strip():
            texts.append(error.strip())
        elif isinstance(error, Mapping) and isinstance(error.get("message"), str):
            texts.append(error["message"].strip())
        envelope = payload.get("response")
        if isinstance(envelope, Mapping) and isinstance(msg := envelope.get("error_message"), str) and msg.strip():
            texts.append(msg.strip())
        for text in texts:
            if len(self._errors) < _MAX_ERRORS:
                self._errors.append(text[:_ERROR_CHARS])

    # -- the state --

    def state(self) -> TurnState:
        steps = tuple(
            Step(
                **{
                    **vars(s),
                    "investigation": s.text(),
                    "parts": [],
                    "parts_length": 0,
                    "sources_involved": list(s.sources_involved),
                }
            )
            for s in self._steps.values()
        )
        ids = [s.id for s in steps]
        if self._active in ids:
            current_index: int | None = ids.index(self._active)
        else:
            current_index = next((i for i, s in enumerate(steps) if _in_progress(s.status)), None)
            if current_index is None and steps:
                current_index = len(steps) - 1
        current = steps[current_index] if current_index is not None else None
        results = InvestigationResults(
            final_answer=strip_html("".join(self._answer)),
            chain_of_thoughts=[s.to_dict() for s in steps],
            sources=[dict(s) for s in self._sources.values()],
            follow_up_suggestions=list(self._suggestions),
        )
        return TurnState(
            results=results,
            steps=steps,
            total_steps=len(steps),
            completed_steps=sum(1 for s in steps if s.completed),
            current_step=(current.description or current.explanation or None) if current else None,
            current_step_number=current_index + 1 if current_index is not None else None,
            session_name=self._session_name,
            session_uuid=self._session_uuid,
            message_id=self._message_id,
            progress_text=self._progress,
            progress_history=tuple(self._history),
            execution_time_ms=self._execution_ms,
            errors=tuple(self._errors),
            ended=self._ended,
        )


def aggregate(events: Iterable[SseEvent]) -> TurnState:
    """The state after `events` (a whole or partial turn)."""
    aggregator = Aggregator()
    aggregator.feed_all(events)
    return aggregator.state()


PROMPT_STATUS_COMPLETED = "PROMPT_STATUS_COMPLETED"
PROMPT_STATUS_ERROR = "PROMPT_STATUS_ERROR"


def state_from_prompt_cycle(
    cycle: Mapping[str, Any], *, session_name: str | None = None, session_uuid: str | None = None
) -> TurnState:
    """The `TurnState` of an inspect response's prompt cycle (contract 4.7), shaped as the stream's.

    `ended` is true when the cycle's status is PROMPT_STATUS_COMPLETED or PROMPT_STATUS_ERROR (the only values
    documented; anything else is taken as still running [GAP]). The step marked current is the first in
    progress, else the last.
    """
    aggregator = Aggregator()
    aggregator._session_name = session_name
    aggregator._session_uuid = session_uuid
    if isinstance(cid := cycle.get("id"), str) and cid:
        aggregator._message_id = cid
    sources = cycle.get("sources")
    for part in sources if isinstance(sources, list) else []:
        aggregator._source(part)
    cots = cycle.get("chain_of_thoughts")
    if isinstance(cots, list) and cots:
        aggregator._cot_snapshot(cots, delta=False)
        aggregator._active = None  # recomputed from the statuses
    answer = cycle.get("final_answer")
    # Capped as the stream's answer is: strip_html reads it on the event loop (16 MiB took seconds).
    aggregator._answer = [answer[:MAX_ANSWER_CHARS]] if isinstance(answer, str) else []
    aggregator._suggestions = [s.strip() for s in _strings(cycle.get("follow_up_suggestions")) if s.strip()]
    status = _text(cycle.get("status")) or None
    aggregator._ended = status in (PROMPT_STATUS_COMPLETED, PROMPT_STATUS_ERROR)
    state = aggregator.state()
    return TurnState(**{**vars(state), "prompt_status": status})


def state_from_inspect(response: Mapping[str, Any]) -> TurnState | None:
    """The state of the last prompt cycle of an inspect response (None when it has none)."""
    cycles = response.get("prompt_cycle")
    if not isinstance(cycles, list) or not cycles or not isinstance(cycles[-1], Mapping):
        return None
    info = response.get("session_info")
    info = info if isinstance(info, Mapping) else {}
    return state_from_prompt_cycle(
        cycles[-1], session_name=_text(info.get("name")) or None, session_uuid=_text(info.get("session_uuid")) or None
    )
