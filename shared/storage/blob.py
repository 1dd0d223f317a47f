"""Async Blob access for one container: put, get, list, delete; the container is created on first use locally.

The Blob SDK is imported inside the methods that use it, on purpose: every request builds its `Deps` (and
so imports this module), while only perf artifacts, investigations' stored tool outputs and the blob check
touch Blob storage, and azure.storage.blob costs about a second to import on a cold worker.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError

from shared.core.errors import NotConfigured
from shared.core.settings import Settings


class BlobStore:
    """Blobs of one container addressed by name (`<workspace>/<kind>/<id>...`); nothing connects until first use."""

    def __init__(self, settings: Settings, *, container: str | None = None) -> None:
        self._settings = settings
        self.container_name = container or settings.blob_container
        self._service: Any = None
        self._container: Any = None
        self._lock = asyncio.Lock()
        self.requests = 0  # operations made through this store (benchmarks report round trips per use case)

    @property
    def configured(self) -> bool:
        return bool(self._settings.blob_connection_string or self._settings.blob_account_url)

    def _build_service(self) -> Any:
        from azure.storage.blob.aio import BlobServiceClient, ExponentialRetry  # deferred heavy SDK: see the top

        s = self._settings
        # The SDK's defaults (60 s reads, three retries backing off 15 s, 18 s, 24 s...) held a request for
        # minutes when the store was down (85 s refused, 326 s hung). Each read is still bounded, not the
        # whole transfer: a large artifact streams as long as bytes keep coming.
        bounds: dict[str, Any] = {
            "connection_timeout": s.store_timeout_s,
            "read_timeout": s.store_timeout_s,
            "retry_policy": ExponentialRetry(initial_backoff=1, increment_base=2, retry_total=1),
        }
        if s.blob_connection_string:
            return BlobServiceClient.from_connection_string(s.blob_connection_string, **bounds)
        if s.blob_account_url:
            # Deferred: azure.identity (0.2 s to import) only for a managed identity, never with a connection string.
            from azure.identity.aio import DefaultAzureCredential

            return BlobServiceClient(s.blob_account_url, credential=DefaultAzureCredential(), **bounds)
        raise NotConfigured(
            "Blob storage is not configured",
            recovery_suggestions=["Set AzureWebJobsStorage or FIREBREAK_BLOB_ACCOUNT_URL (managed identity)."],
        )

    async def _get_container(self) -> Any:
        if self._container is not None:
            return self._container
        async with self._lock:
            if self._container is None:
                self._service = self._build_service()
                container = self._service.get_container_client(self.container_name)
                if self._settings.create_resources:
                    with contextlib.suppress(ResourceExistsError):
                        await container.create_container()
                self._container = container
        return self._container

    async def put(
        self, name: str, data: bytes | str, *, content_type: str = "application/octet-stream", overwrite: bool = True
    ) -> None:
        from azure.storage.blob import ContentSettings  # deferred heavy SDK: see the top

        self.requests += 1
        container = await self._get_container()
        if isinstance(data, str):
            data = data.encode("utf-8")
        await container.upload_blob(
            name, data, overwrite=overwrite, content_settings=ContentSettings(content_type=content_type)
        )

    async def put_blocks(
        self, name: str, chunks: Any, *, content_type: str = "application/octet-stream"
    ) -> tuple[int, str]:
        """Upload an iterable of byte chunks as staged blocks, hashing on the way: (size, SHA-256).

        Nothing is visible under `name` until the final block-list commit, so a failure part-way leaves
        no half-written blob (uncommitted blocks expire on their own).
        """
        from azure.storage.blob import BlobBlock, ContentSettings  # deferred heavy SDK: see the top

        self.requests += 1
        container = await self._get_container()
        client = container.get_blob_client(name)
        digest, size = hashlib.sha256(), 0
        blocks: list[BlobBlock] = []

        for chunk in chunks:
            if not chunk:
                continue
            digest.update(chunk)
            size += len(chunk)
            block_id = base64.b64encode(f"{len(blocks):08d}".encode()).decode()
            await client.stage_block(block_id, bytes(chunk))
            blocks.append(BlobBlock(block_id=block_id))
        await client.commit_block_list(blocks, content_settings=ContentSettings(content_type=content_type))
        return size, digest.hexdigest()

    async def get(self, name: str) -> bytes | None:
        """The blob's bytes, or None when it does not exist."""
        self.requests += 1
        container = await self._get_container()
        try:
            downloader = await container.download_blob(name)
            data: bytes = await downloader.readall()
            return data
        except ResourceNotFoundError:
            return None

    async def download_to(self, name: str, sink: Any, *, limit: int) -> tuple[int, str] | None:
        """Stream the blob into `sink` (a binary file) chunk by chunk: (size, SHA-256 hex), None when missing.

        Raises ValueError past `limit` bytes, before the rest is read.
        """
        self.requests += 1
        container = await self._get_container()
        try:
            downloader = await container.download_blob(name)
        except ResourceNotFoundError:
            return None
        if downloader.size > limit:
            raise ValueError(f"{downloader.size} bytes is over the {limit}-byte artifact limit")
        digest, size = hashlib.sha256(), 0
        async for chunk in downloader.chunks():
            size += len(chunk)
            if size > limit:
                raise ValueError(f"more than the {limit}-byte artifact limit")
            digest.update(chunk)
            sink.write(chunk)
        return size, digest.hexdigest()

    async def open_download(self, name: str, *, offset: int = 0, length: int | None = None) -> Any | None:
        """The SDK's streaming downloader of a blob or a range of it, None when missing.

        `.size` is the bytes in the range; the blob's whole size ends `.properties.content_range`.
        """
        self.requests += 1
        container = await self._get_container()
        try:
            return await container.download_blob(name, offset=offset, length=length)
        except ResourceNotFoundError:
            return None
        except HttpResponseError as exc:
            if exc.status_code != 416 or offset:
                raise
            # A range of an empty blob is refused (416): its whole, empty, download is what was asked for.
            return await container.download_blob(name)

    async def upload_url(self, name: str, *, minutes: int, write: bool) -> str | None:
        """A URL that can PUT (write) or GET the blob for `minutes` without other credentials.

        Account-key SAS with a connection string (Azurite, key-based accounts), a user delegation SAS
        with managed identity; None if neither can sign.
        """
        from azure.storage.blob import BlobSasPermissions, generate_blob_sas  # deferred heavy SDK: see the top

        container = await self._get_container()
        start = datetime.now(UTC) - timedelta(minutes=5)  # clock skew
        expiry = datetime.now(UTC) + timedelta(minutes=minutes)
        permission = BlobSasPermissions(read=not write, create=write, write=write)
        client = container.get_blob_client(name)
        credential = getattr(self._service, "credential", None)
        account_key = getattr(credential, "account_key", None)
        if account_key:
            token = generate_blob_sas(
                client.account_name,
                self.container_name,
                name,
                account_key=account_key,
                permission=permission,
                start=start,
                expiry=expiry,
            )
        else:
            try:
                key = await self._service.get_user_delegation_key(start, expiry)
            except Exception:  # an identity without the delegation permission: no URL, the caller falls back
                return None
            token = generate_blob_sas(
                client.account_name,
                self.container_name,
                name,
                user_delegation_key=key,
                permission=permission,
                start=start,
                expiry=expiry,
            )
        return f"{client.url}?{token}"

    async def delete(self, name: str) -> bool:
        self.requests += 1
        container = await self._get_container()
        try:
            await container.delete_blob(name)
            return True
        except ResourceNotFoundError:
            return False

    async def list(self, prefix: str) -> AsyncIterator[str]:
        self.requests += 1
        container = await self._get_container()
        async for blob in container.list_blobs(name_starts_with=prefix):
            yield blob.name

    async def list_sizes(self, prefix: str) -> AsyncIterator[tuple[str, int]]:
        """(name, size in bytes) of every blob under `prefix`."""
        self.requests += 1
        container = await self._get_container()
        async for blob in container.list_blobs(name_starts_with=prefix):
            yield blob.name, blob.size

    async def close(self) -> None:
        if self._service is not None:
            await self._service.close()
            self._service = None
            self._container = None
