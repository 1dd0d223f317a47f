"""How a capability publishes stored things as MCP resources: a URI template, a lister and a reader per kind.

Every list and read runs for one caller (`Principal`): a kind lists only the caller's workspace's items, and
its reader answers None for a URI it does not own or that belongs to another workspace, so an unknown URI and
someone else's look the same (NOT_FOUND). Readers cap what they return (`MAX_RESOURCE_BYTES`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from shared.identity.models import Principal
from shared.tools.deps import Deps

# The most one resources/read returns; a larger stored item is refused rather than cut mid-document.
MAX_RESOURCE_BYTES = 1024 * 1024
# The most entries one kind lists for a caller (newest first where the store can tell).
MAX_LISTED_PER_KIND = 100


@dataclass(frozen=True)
class ResourceEntry:
    """One item in resources/list."""

    uri: str
    name: str
    mime_type: str
    description: str | None = None
    size: int | None = None


@dataclass(frozen=True)
class ResourceBody:
    """What resources/read returns: text (JSON, Markdown, SVG) or bytes (sent base64)."""

    uri: str
    mime_type: str
    text: str | None = None
    blob: bytes | None = None


@dataclass(frozen=True)
class ResourceKind:
    """A family of resources under one URI template, e.g. `firebreak://perf/reports/{report_id}/{file}`.

    `prefix` is the literal start of every URI of the kind (the reader of the first matching kind is asked).
    """

    name: str
    uri_template: str
    prefix: str
    description: str
    mime_type: str
    list: Callable[[Principal, Deps], Awaitable[list[ResourceEntry]]]
    read: Callable[[Principal, Deps, str], Awaitable[ResourceBody | None]]
