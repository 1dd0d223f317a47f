"""What log lines say, read line by line: levels, templates, stack frames, access-log statuses, error categories."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Every pattern here runs over outside text, one line (at most LINE_CHARS characters) at a time. Each one is
# linear: a repeated class either starts at a word start (`\b`, a lookbehind) or is led by a literal, runs
# are possessive where a failure would otherwise give characters back, and repetitions are bounded.
LINE_CHARS = 1000

# --- levels -------------------------------------------------------------------------------------------------

LEVEL_WEIGHTS = {"fatal": 5.0, "error": 4.0, "warning": 2.0, "info": 0.0, "debug": -1.0, "": 0.0}

_LEVEL_WORDS = {
    "fatal": "fatal", "panic": "fatal", "dpanic": "fatal", "critical": "fatal", "crit": "fatal",
    "emerg": "fatal", "emergency": "fatal", "alert": "fatal", "severe": "error", "error": "error",
    "err": "error", "eror": "error", "warning": "warning", "warn": "warning", "info": "info",
    "notice": "info", "note": "info", "system": "info", "log": "info", "debug": "debug", "dbug": "debug",
    "trace": "debug", "verbose": "debug", "fine": "debug", "i": "info", "w": "warning", "e": "error",
    "f": "fatal", "d": "debug",
}  # fmt: skip
# pino/bunyan numeric levels
_NUMERIC_LEVELS = {"10": "debug", "20": "debug", "30": "info", "40": "warning", "50": "error", "60": "fatal"}

# Patterns led by a literal let the regex engine skip to the places worth trying (5x faster over prose than
# ones led by `\b` or an optional character); the word start is checked on the match instead.
# JSON (`"level":"error"`, `"severity":"ERROR"`, pino's `"level":50`) and logfmt (`level=error`).
_KEYED_LEVEL = re.compile(r"(?:level|severity|lvl|levelname|loglevel)[\"']?\s?[:=]\s?[\"']?([A-Za-z]{1,9}|\d{2})\b")
# klog (kubelet, client-go, controllers): `E0412 10:11:12.123456    1 file.go:42] ...`
_KLOG = re.compile(r"([IWEF])\d{4} \d\d:\d\d:\d\d")
# An upper-case level word (most text formats), a bracketed or tabbed lower-case one (nginx `[error]`, MySQL
# `[Warning]`, zap's console `\terror\t`), or a command-line tool's `error:` at the line start.
_UPPER_LEVEL = re.compile(
    r"(?:FATAL|PANIC|CRITICAL|CRIT|EMERG|ALERT|SEVERE|ERROR|ERR|WARNING|WARN|INFO|NOTICE|DEBUG|TRACE|LOG)\b"
)
_MARKED_LEVEL = re.compile(
    r"\[(emerg|alert|crit|error|warn|notice|info|debug|Error|Warning|Warn|Note|System|Info)\]"
    r"|\t(fatal|panic|dpanic|error|warn|info|debug)\t"
)
_CLI_LEVEL = re.compile(r"(error|fatal|panic|Error|Fatal|Panic)\b")
_HEAD = 160


def _word_start(text: str, at: int) -> bool:
    return at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_")


def level_of(line: str) -> str:
    """The line's log level ("fatal", "error", "warning", "info", "debug"), or "" when it names none."""
    for keyed in _KEYED_LEVEL.finditer(line, 0, 400):
        word = keyed.group(1).lower()
        if _word_start(line, keyed.start()) and (word in _NUMERIC_LEVELS or (len(word) > 1 and word in _LEVEL_WORDS)):
            return _NUMERIC_LEVELS.get(word) or _LEVEL_WORDS[word]
    m = _KLOG.match(line)
    if m:
        return _LEVEL_WORDS[m.group(1).lower()]
    head = line[:_HEAD]
    upper = next((u for u in _UPPER_LEVEL.finditer(head) if _word_start(head, u.start())), None)
    marked = _MARKED_LEVEL.search(head)
    found = [f for f in (upper, marked) if f is not None]
    if found:
        first = min(found, key=lambda f: f.start())
        return _LEVEL_WORDS.get(next((g for g in first.groups() if g), first.group(0)).lower(), "")
    m = _CLI_LEVEL.match(line)
    return _LEVEL_WORDS[m.group(1).lower()] if m else ""


# --- stack traces ---------------------------------------------------------------------------------------------

TRACEBACK_START = "Traceback (most recent call last)"
# Java/Node `at ...` frames, `... 12 more`, Python `File "...", line N` frames say what they are; inside a
# traceback or a Go goroutine dump every indented line is a frame (or a frame's source line).
_FRAME = re.compile(r"\s++(?:at \S|\.\.\. \d+ (?:more|common frames omitted)|File \")")
_GOROUTINE = re.compile(r"goroutine \d+ \[")
# The line that names an exception: `pkg.mod.SomeError: message`, `Caused by: ...`, `Exception in thread`.
_EXCEPTION = re.compile(
    r"(?:Exception in thread \"[^\"]{0,200}\" |Caused by: |Uncaught |Unhandled(?:PromiseRejection\w{0,20})?:? )?"
    r"((?:[A-Za-z_$][\w$]*+\.){0,20}+[\w$]{0,100}?(?:Error|Exception|Exit|Interrupt|Failure|Fault|Rejection))\b"
    r"(?::|$| \(|\s\[)"
)
_FATAL_PREFIX = re.compile(r"(?:panic: |fatal error: |FATAL: |PANIC: |Fatal error: |Segmentation fault)")


def is_frame(line: str, in_trace: bool) -> bool:
    """A stack frame (or a traceback's source line): part of a trace, never a signal of its own."""
    return line[:1].isspace() and (in_trace or bool(_FRAME.match(line)))


def starts_goroutine_dump(line: str) -> bool:
    """`goroutine 1 [running]:`: the Go frames that follow (until a blank line) are a trace."""
    return bool(_GOROUTINE.match(line))


def exception_kind(line: str) -> str:
    """ "caused_by", "exception" or "fatal" when the line names an exception or a dying program, else ""."""
    stripped = line.lstrip()
    if stripped.startswith("Caused by: "):
        return "caused_by"
    if _FATAL_PREFIX.match(stripped):
        return "fatal"
    if _EXCEPTION.match(stripped):
        return "exception"
    return ""


def exception_name(line: str) -> str:
    """The exception's class (`java.net.ConnectException`, `KeyError`), or ""."""
    m = _EXCEPTION.match(line.lstrip())
    return m.group(1) if m else ""


# --- templates ------------------------------------------------------------------------------------------------

# What varies between repetitions of one message is, nearly always, a word with a digit in it (times, counts,
# ids, IPs, ports, durations, pod-name hashes) or a one-word quoted value (a name). Words are cut with
# str.split, so the work is one pass whatever the line holds.
_DIGIT = re.compile(r"\d")
_QUOTES = "\"'`"
TEMPLATE_CHARS = 200


def _mask_word(word: str) -> str:
    if _DIGIT.search(word):
        key, eq, _ = word.partition("=")
        return f"{key}=<*>" if eq and key and not _DIGIT.search(key) else "<*>"
    if len(word) > 2 and word[0] in _QUOTES and word.rstrip(",;:.)]}")[-1:] in _QUOTES:
        return "<s>"
    return word


def template_of(text: str) -> str:
    """The line with its variable words masked (`<*>`: a digit in it; `<s>`: a one-word quoted value)."""
    out: list[str] = []
    size = 0
    for word in text[: TEMPLATE_CHARS * 3].split():
        out.append(_mask_word(word))
        size += len(out[-1]) + 1
        if size > TEMPLATE_CHARS:
            break
    return " ".join(out)[:TEMPLATE_CHARS]


# A JSON line's message (and error) is what repeats; its keys and other values are masked away.
_JSON_MESSAGE = re.compile(r"\"(?:msg|message|error|err|exception|error\.message)\"\s?:\s?\"((?:[^\"\\]|\\.){0,400}+)")


def message_of(line: str) -> str:
    """The part of the line a template is made of: a JSON line's message fields, else the line."""
    if line.startswith("{"):
        parts = [m.group(1) for m in _JSON_MESSAGE.finditer(line[:LINE_CHARS])]
        if parts:
            level = level_of(line)
            return f"{level} " + " ".join(parts)
    return line


# --- access logs ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Access:
    """One HTTP request as an access log line records it."""

    status: int
    method: str
    path: str


_METHODS = "GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS|CONNECT|TRACE"
# nginx/Apache combined, Envoy/Istio: `"GET /path HTTP/1.1" 503`
_COMBINED = re.compile(rf"\"({_METHODS}) (\S{{1,1000}}+) HTTP/[\d.]{{1,4}}\" (\d{{3}})\b")
# Gin: `| 500 |  1.2ms | 10.0.0.1 | GET      "/api"`
_GIN = re.compile(rf"\| (\d{{3}}) \|.{{0,120}}?\| ({_METHODS})\s{{1,10}}+\"(/[^\"]{{0,300}})\"")
# JSON and logfmt access lines
_KEYED_STATUS = re.compile(
    r"(?:status|statusCode|status_code|http_status|response_code|response_status)[\"']?\s?[:=]\s?[\"']?(\d{3})\b"
)
_KEYED_PATH = re.compile(
    r"(?:path|url|uri|request_uri|route|request)[\"']?\s?[:=]\s?[\"']?(?:[A-Z]{3,7} )?(/[^\"'\s?]{0,300})"
)
_KEYED_METHOD = re.compile(rf"(?:method|request_method|verb)[\"']?\s?[:=]\s?[\"']?({_METHODS})\b")


def access_of(line: str) -> Access | None:
    """The request an access-log line records (status, method, path without its query), or None."""
    m = _COMBINED.search(line) if "HTTP/" in line else None
    if m:
        return Access(int(m.group(3)), m.group(1), m.group(2).split("?", 1)[0])
    m = _GIN.search(line) if "| " in line else None
    if m:
        return Access(int(m.group(1)), m.group(2), m.group(3).split("?", 1)[0])
    if "tatus" not in line and "STATUS" not in line:
        return None
    status = _KEYED_STATUS.search(line)
    path = _KEYED_PATH.search(line) if status else None
    if status and path:
        method = _KEYED_METHOD.search(line)
        return Access(int(status.group(1)), method.group(1) if method else "", path.group(1))
    return None


def access_template(access: Access) -> str:
    """Requests group by status, method and path (path segments with a digit masked: ids)."""
    return f"HTTP {access.status} {access.method} {masked_path(access.path)}".replace("  ", " ")


def masked_path(path: str) -> str:
    """`/api/orders/1234` -> `/api/orders/<*>`: the route the requests share."""
    return "/".join("<*>" if _DIGIT.search(seg) else seg for seg in path[:300].split("/"))


# --- start markers --------------------------------------------------------------------------------------------

_START = re.compile(
    r"starting|started|start up|starting up|listening on|listening at|now listening|booting|booted|"
    r"initializing|initialized|initialising|initialised|ready to accept connections|server running|running on|"
    r"startup complete|application startup|serving on|launching"
)


def is_start(line: str) -> bool:
    """A line that says the program (re)starts or is ready: errors after the last one matter most."""
    return bool(_START.search(line[: _HEAD * 2].lower()))
