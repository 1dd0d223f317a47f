"""Log lines ranked by error-likeness and rarity, and the findings the strongest of them support."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from shared.investigations.rules.context import ev
from shared.investigations.rules.log_categories import CATEGORIES, SPECIFIC, classify
from shared.investigations.rules.log_explain import explain
from shared.investigations.rules.log_specifics import details_of
from shared.investigations.rules.log_vocabulary import (
    LEVEL_WEIGHTS,
    TRACEBACK_START,
    Access,
    access_of,
    access_template,
    exception_kind,
    is_frame,
    is_start,
    level_of,
    masked_path,
    message_of,
    starts_goroutine_dump,
    template_of,
)
from shared.investigations.rules.log_window import MAX_CHARS, MAX_LINES, Window, read_window
from shared.investigations.rules.state import CallRecord, Finding

__all__ = ["MAX_CHARS", "MAX_LINES", "LogSignal", "LogSummary", "log_findings", "log_summary", "rank_log_lines"]

QUOTE_CHARS = 300


class LogSignal(BaseModel):
    """One kind of log line worth reading: a representative line quoted verbatim and why it ranks where it does."""

    line: str = Field(description="The first line of its template, verbatim, at most 300 characters.")
    category: str = Field(description="A log_categories.CATEGORIES name, or warning / rare (an unusual line).")
    score: float = Field(description="Error-likeness plus rarity/repetition; higher reads first.")
    count: int = Field(description="How many of the lines read share its template.")
    first_index: int = Field(description="0-based index of its first line among the lines read.")
    template: str = Field(description="The line with times, numbers, ids, IPs and one-word quoted values masked.")
    level: str = Field("", description="fatal, error, warning, info, debug, or '' when the line names none.")
    after_start: bool = Field(False, description="The first error-like line after the log's last start marker.")
    details: dict[str, str] = Field(default_factory=dict, description="Specifics the line names (log_specifics).")

    def brief(self) -> str:
        """One line for a prompt or a report: category, level, count, first-after-start, then the quote."""
        facts = [self.category, self.level or "no level", f"x{self.count}"]
        if self.after_start:
            facts.append("first error after start")
        return f"[{', '.join(facts)}] {self.line}"


class LogSummary(BaseModel):
    """What reading one log found, for saying what was checked (and found healthy)."""

    lines: int = Field(description="Lines read (blank lines and stack frames included).")
    chars: int = Field(description="Characters the lines read came from.")
    truncated: bool = Field(description="The text was longer than what was read.")
    head_lines: int = Field(0, description="When truncated: lines read from the log's head, before the unread middle.")
    templates: int = Field(description="Distinct templates among the lines read.")
    error_lines: int = Field(description="Lines that read as errors (an error level or an error category).")
    last_start_index: int = Field(-1, description="Index of the last start marker, -1 when none.")

    @property
    def healthy(self) -> bool:
        """No line reads as an error."""
        return self.error_lines == 0

    def note(self, subject: str) -> str:
        """What was checked, for a report: `Log of X: 240 lines read, no error line.`"""
        read = f"{self.lines} lines read" + (" (head and tail of a longer log)" if self.truncated else "")
        found = "no error line" if self.healthy else f"{self.error_lines} error lines"
        return f"Log of {subject}: {read}, {found}."


@dataclass
class _Group:
    """The lines that share one template."""

    template: str
    first: int
    raw: str
    level: str
    category: str
    pos: int
    exception: str
    start: bool
    count: int = 0
    traceback_end: bool = False  # the exception line that ends a Python traceback
    root_cause: bool = False  # the last `Caused by:` of a Java exception chain
    after_start: bool = False

    @property
    def error_like(self) -> bool:
        return bool(self.category) or self.level in ("error", "fatal")

    @property
    def alarming(self) -> bool:
        """An error by its level, an exception, or a category that names a failure (not a slow or 5xx line)."""
        category = CATEGORIES.get(self.category)
        return (
            self.level in ("error", "fatal") or bool(self.exception) or (category is not None and category.weight >= 3)
        )


@dataclass
class _Scan:
    window: Window
    groups: dict[str, _Group] = field(default_factory=dict)
    order: list[tuple[int, _Group]] = field(default_factory=list)
    last_start: int = -1


def _describe(index: int, raw: str, template: str, access: Access | None) -> _Group:
    exception = exception_kind(raw)
    level = level_of(raw)
    if access:
        category = "http_5xx" if access.status >= 500 else "rate_limited" if access.status == 429 else ""
        pos = 0
    else:
        category, pos = classify(raw)
    if exception == "fatal":
        level = "fatal"
    elif exception and level in ("", "info"):
        level = "error"
    if not category and (exception or level in ("error", "fatal")):
        category = "crash" if exception or level == "fatal" else "error"
    start = not category and level not in ("warning", "debug") and is_start(raw)
    return _Group(template, index, raw, level, category, pos, exception, start)


def _trace_step(raw: str, trace: str) -> tuple[bool, str, bool]:
    """(skip the line, the trace state after it, the line ends a Python traceback) for one line.

    The state is "python" inside a traceback, "go" inside a goroutine dump, "" elsewhere; frames are skipped.
    """
    if not raw.strip():
        return True, ("" if trace == "go" else trace), False
    if trace == "go" or is_frame(raw, trace == "python"):
        return True, trace, False
    if TRACEBACK_START in raw:
        return True, "python", False
    if starts_goroutine_dump(raw):
        return True, "go", False
    return False, "", trace == "python"


def _scan(text: str) -> _Scan:
    scan = _Scan(read_window(text))
    trace = ""
    chain: list[_Group] = []  # the `Caused by:` lines of the exception chain going on: its last is the root cause
    for i, raw in enumerate(scan.window.lines):
        if i == scan.window.head_lines and i:  # the unread middle ends any trace or chain
            trace, chain = "", _end_chain(chain)
        skip, trace, traceback_end = _trace_step(raw, trace)
        if skip:
            continue
        access = access_of(raw)
        template = access_template(access) if access else template_of(message_of(raw))
        group = scan.groups.get(template)
        if group is None:
            group = scan.groups[template] = _describe(i, raw, template, access)
        group.count += 1
        group.traceback_end |= traceback_end
        chain = [*chain, group] if group.exception == "caused_by" else _end_chain(chain)
        scan.order.append((i, group))
        if group.start:
            scan.last_start = i
    _end_chain(chain)
    if scan.last_start >= 0:
        first = next((g for i, g in scan.order if i > scan.last_start and g.alarming), None)
        if first:
            first.after_start = True
    return scan


def _end_chain(chain: list[_Group]) -> list[_Group]:
    if chain:
        chain[-1].root_cause = True
    return []


_EXCEPTION_BONUS = {"exception": 0.5, "caused_by": 1.0, "fatal": 0.5, "": 0.0}
_CATEGORY_FACTOR = {"info": 0.75, "debug": 0.5}


def _score(g: _Group, total: int, top_error: _Group | None) -> float:
    category = CATEGORIES.get(g.category)
    score = LEVEL_WEIGHTS.get(g.level, 0.0) + _EXCEPTION_BONUS[g.exception]
    score += (category.weight if category else 0.0) * _CATEGORY_FACTOR.get(g.level, 1.0)
    score += 1.0 if g.traceback_end else 0.0
    score += 0.5 if g.root_cause else 0.0
    score += 2.5 if g.after_start else 0.0
    if total >= 20:  # a line seen once among many is unusual
        score += min(1.5, math.log10(total / g.count))
    if g.error_like:  # an error that keeps coming back is the other thing to read
        score += min(1.5, math.log10(g.count)) + (0.5 if g is top_error else 0.0)
    return score


def _quote(raw: str, pos: int) -> str:
    """The line verbatim, or the QUOTE_CHARS around its telling phrase when it is longer."""
    if len(raw) <= QUOTE_CHARS or pos < 0:
        return raw.strip()[:QUOTE_CHARS]
    start = max(0, min(pos - 80, len(raw) - QUOTE_CHARS))
    return raw[start : start + QUOTE_CHARS].strip()


def _with_continuation(scan: _Scan, g: _Group) -> str:
    """The line and the indented lines that continue it (Postgres' "Is the server running on host ...")."""
    more = [
        ln.strip()
        for ln in scan.window.lines[g.first + 1 : g.first + 3]
        if ln[:1].isspace() and not is_frame(ln, False)
    ]
    return " ".join([g.raw, *more])


def _signal(scan: _Scan, g: _Group, score: float, total: int, server_errors: int) -> LogSignal:
    category = g.category or ("warning" if g.level == "warning" else "rare")
    details = details_of(g.category, _with_continuation(scan, g)) if g.category else {}
    if g.category == "http_5xx":
        details |= {"count": str(g.count), "server_errors": str(server_errors)}
        if "path" in details:
            details["path"] = masked_path(details["path"])
    return LogSignal(line=_quote(g.raw, g.pos), category=category, score=round(score, 2), count=g.count,
                     first_index=g.first, template=g.template, level=g.level, after_start=g.after_start,
                     details=details)  # fmt: skip


def _rank(scan: _Scan, limit: int) -> list[LogSignal]:
    total = len(scan.order)
    errors = [g for g in scan.groups.values() if g.error_like]
    top_error = max(errors, key=lambda g: (g.count, -g.first), default=None)
    if top_error is not None and top_error.count < 2:
        top_error = None
    server_errors = sum(g.count for g in errors if g.category == "http_5xx")
    scored = []
    for g in scan.groups.values():
        if g.start:
            continue
        score = _score(g, total, top_error)
        if g.error_like or g.level == "warning" or score >= 1.0:
            scored.append((score, g))
    scored.sort(key=lambda sg: (-sg[0], sg[1].first))
    return [_signal(scan, g, s, total, server_errors) for s, g in scored[:limit]]


def rank_log_lines(text: str, limit: int = 10) -> list[LogSignal]:
    """The log's most telling kinds of line, best first: errors by level and category, the first error after the
    last start, the most repeated error, bursts of HTTP 5xx, and lines rare among many.

    Reads at most 2,000 lines from 512 KB (a long log's first 200 lines and its tail: log_window), each line
    cut at 1,000 characters; `first_index` counts the lines read.
    """
    return _rank(_scan(text), limit) if text.strip() else []


def log_summary(text: str) -> LogSummary:
    """How much of a log was read and how many of its lines read as errors."""
    scan = _scan(text)
    errors = sum(1 for _, g in scan.order if g.error_like)
    w = scan.window
    return LogSummary(lines=len(w.lines), chars=w.chars, truncated=w.truncated, head_lines=w.head_lines,
                      templates=len(scan.groups), error_lines=errors, last_start_index=scan.last_start)  # fmt: skip


# Findings per log: its strongest reasons, not every line that agrees with them.
MAX_FINDINGS = 3


def log_findings(
    rec: CallRecord, subject: str, limit: int = MAX_FINDINGS, focus: frozenset[str] = frozenset()
) -> list[Finding]:
    """Findings from one log read (a `pods_log`-shaped call): its strongest error signals, one per category.

    Each cause reads "<subject> fails because <what the line means, with its specifics>, shown by the line:
    <quote>"; the remediation follows from the category and the specifics; the quote is the evidence. Lines
    that only say that something failed (category crash/error) are used only when no line says why.
    `subject` is the name the cause starts with and the finding's subject (the pod's name, as other rules use).
    `focus` holds the alert's distinctive words (`slack` for a failing Slack integration): lines that name one come
    first and are held a little surer, since they are about what the alert measures.
    """
    if rec.is_error or not rec.output.strip():
        return []
    signals = rank_log_lines(rec.output, limit=20)
    pool = [s for s in signals if s.category in SPECIFIC] or [s for s in signals if s.category in ("crash", "error")]
    # A line about what the alert measures leads, even one that only says that it failed.
    about = [
        s for s in signals if _names(s.line, focus) and (s.category in SPECIFIC or s.category in ("crash", "error"))
    ]
    pool = about + [s for s in pool if s not in about]
    out: list[Finding] = []
    for s in pool:
        if len(out) >= limit:
            break
        if any(f.rule == f"log_{s.category}" for f in out):
            continue
        f = _finding(rec, subject, s, [t for t in signals if t.category == s.category and t is not s])
        if s in about:
            f.confidence = min(0.95, f.confidence + 0.1)
        out.append(f)
    return out


def _names(line: str, focus: frozenset[str]) -> bool:
    lower = line.lower()
    return any(re.search(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])", lower) for w in focus)


_INCIDENTAL = frozenset({"exception", "count", "server_errors"})


def _finding(rec: CallRecord, subject: str, s: LogSignal, same: list[LogSignal]) -> Finding:
    """One finding from the best line of a category; a weaker line of it adds the specifics the best one lacks
    (a Java chain's root `Caused by: ...ConnectException` names no host, the line above it does)."""
    category = CATEGORIES[s.category]
    details, evidence = dict(s.details), [ev(rec, s.line)]
    for other in same:
        extra = {k: v for k, v in other.details.items() if k not in details and k not in _INCIDENTAL}
        if extra and len(evidence) < 3:
            details |= extra
            evidence.append(ev(rec, other.line))
    because, fixes = explain(s.category, details, s.line)
    notes = []
    if s.after_start:
        notes.append("the first error after its last start")
    if s.count > 1 and s.category != "http_5xx":  # its cause counts the requests already
        notes.append(f"{s.count} times in the log tail")
    note = f" ({'; '.join(notes)})" if notes else ""
    confidence = category.confidence + (0.05 if s.after_start else 0.0) - (0.1 if s.level in ("info", "debug") else 0.0)
    return Finding(
        rule=f"log_{s.category}",
        subject=subject,
        cause=f"{subject} fails because {because}{note}, shown by the line: {s.line}",
        evidence=evidence,
        remediation=fixes,
        confidence=round(min(0.95, max(0.1, confidence)), 2),
        symptom=category.symptom,
    )
