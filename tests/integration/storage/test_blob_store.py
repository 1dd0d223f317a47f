"""Blob round trips against Azurite."""

from __future__ import annotations

import uuid

from shared.tools.deps import Deps


async def test_put_get_list_delete(deps: Deps) -> None:
    prefix = f"ws-{uuid.uuid4().hex}/reports/"
    await deps.blobs.put(prefix + "a.md", "# hello", content_type="text/markdown")
    await deps.blobs.put(prefix + "b.json", b'{"x":1}', content_type="application/json")
    assert await deps.blobs.get(prefix + "a.md") == b"# hello"
    assert sorted([n async for n in deps.blobs.list(prefix)]) == [prefix + "a.md", prefix + "b.json"]
    assert await deps.blobs.delete(prefix + "a.md") is True
    assert await deps.blobs.get(prefix + "a.md") is None
    assert await deps.blobs.delete(prefix + "a.md") is False


async def test_overwrite_replaces_content(deps: Deps) -> None:
    name = f"ws-{uuid.uuid4().hex}/x.txt"
    await deps.blobs.put(name, "one")
    await deps.blobs.put(name, "two")
    assert await deps.blobs.get(name) == b"two"
