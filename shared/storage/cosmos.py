"""Async Cosmos DB access: one client per process, containers bootstrapped on first use, typed errors."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar, cast

from azure.core import MatchConditions
from azure.core.async_paging import AsyncPageIterator
from azure.cosmos import PartitionKey, exceptions
from azure.cosmos.aio import ContainerProxy, CosmosClient, DatabaseProxy
from azure.cosmos.exceptions import CosmosResourceExistsError

from shared.core.errors import Conflict, NotConfigured, NotFound, ValidationFailed
from shared.core.settings import Settings
from shared.storage.containers import ContainerSpec, catalogue_of

Doc = dict[str, Any]
# One operation of a transactional batch, in the SDK's tuple form: (type, args) or (type, args, kwargs).
# Build them with batch_create / batch_upsert / batch_replace / batch_patch / batch_delete / batch_read.
BatchOp = tuple[str, tuple[Any, ...]] | tuple[str, tuple[Any, ...], dict[str, Any]]
MAX_BATCH_OPERATIONS = 100
T = TypeVar("T")
R = TypeVar("R")

# Cosmos ids may not hold '/', '\\', '?' or '#': the SDK puts the id into the resource path, so such an id
# would address another resource ("x/../inc_1") or none at all (a 500). Control characters and non-ASCII
# never occur in ids this app mints. An id outside this set simply does not exist.
_MAX_ID = 255
_MAX_CONTINUATION = 16 * 1024
# Projected field names go into the query text: identifiers only (they come from code, never from callers).
_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def valid_id(item_id: object) -> bool:
    return (
        isinstance(item_id, str)
        and 0 < len(item_id) <= _MAX_ID
        and item_id.isascii()
        and item_id.isprintable()
        and not any(c in item_id for c in "/\\?#")
    )


class PreconditionFailed(Conflict):
    """A write's precondition did not hold (a patch `condition`, an etag): nothing was written.

    A Conflict (409) unless the caller maps it: a filter such as `c.owner = '...'` that does not hold
    usually means "not yours", which the caller answers as NotFound.
    """


def batch_create(doc: Doc) -> BatchOp:
    return ("create", (doc,))


def batch_upsert(doc: Doc) -> BatchOp:
    return ("upsert", (doc,))


def batch_replace(doc: Doc, *, etag: str | None = None) -> BatchOp:
    return ("replace", (doc["id"], doc), {"if_match_etag": etag} if etag else {})


def batch_patch(item_id: str, operations: list[dict[str, Any]], *, condition: str | None = None) -> BatchOp:
    """Patch operations (`incr`, `set`, ...); `condition` is a filter predicate (`from c where ...`) the item
    must satisfy, else the batch fails with PreconditionFailed."""
    return ("patch", (item_id, operations), {"filter_predicate": condition} if condition else {})


def batch_delete(item_id: str) -> BatchOp:
    return ("delete", (item_id,))


def batch_read(item_id: str) -> BatchOp:
    return ("read", (item_id,))


def _batch_target(op: BatchOp) -> object:
    args = op[1]
    return args[0]["id"] if op[0] in ("create", "upsert") and isinstance(args[0], dict) else args[0]


def _bad_continuation() -> ValidationFailed:
    return ValidationFailed.on_field(
        "continuation",
        "not a continuation token",
        "continuation is not a token this server issued",
        suggestions=["Pass the continuation value of the previous page unchanged, or omit it for the first page."],
    )


def _check_continuation(token: str | None) -> None:
    """A continuation token goes into a request header: only what the server could have issued passes."""
    if token is not None and not (len(token) <= _MAX_CONTINUATION and token.isascii() and token.isprintable()):
        raise _bad_continuation()


class CosmosContainer:
    """One container with the operations the stores need; SDK errors become our typed errors.

    Every query is scoped to one partition and says so in its WHERE clause. Real Cosmos does not
    need that (the partition key travels in a header) but the local Cosmos-API server ignores the
    header and refuses a query without it, so writing it always keeps one query text for both.
    """

    def __init__(self, client: ContainerProxy, spec: ContainerSpec, *, local_compat: bool) -> None:
        self._c = client
        self.spec = spec
        self._compat = local_compat
        self.requests = 0  # round trips made through this container (benchmarks report them per operation)

    async def _counted(self, call: Awaitable[T]) -> T:
        self.requests += 1
        return await call

    async def read(self, item_id: str, pk: str) -> Doc | None:
        """The item, or None when it does not exist."""
        if not valid_id(item_id):
            return None
        try:
            return await self._counted(self._c.read_item(item_id, partition_key=pk))
        except exceptions.CosmosResourceNotFoundError:
            return None
        except exceptions.CosmosHttpResponseError as exc:
            # The local server crashes (500) on a point read of a missing id instead of answering 404; ask
            # again by query, which also returns the item if a concurrent writer created it meanwhile.
            if self._compat and exc.status_code == 500:
                found, _ = await self._query_page(pk, "c.id = @id", {"@id": item_id}, max_items=1)
                return found[0] if found else None
            raise

    async def get(self, item_id: str, pk: str, *, what: str = "item") -> Doc:
        doc = await self.read(item_id, pk)
        if doc is None:
            raise NotFound(f"{what} {item_id!r} not found", details={"id": item_id})
        return doc

    async def create(self, doc: Doc) -> Doc:
        _check_new_id(doc)
        try:
            return await self._counted(self._c.create_item(doc))
        except exceptions.CosmosResourceExistsError:
            raise Conflict(f"{doc.get('id')!r} already exists", details={"id": doc.get("id")}) from None

    async def upsert(self, doc: Doc) -> Doc:
        _check_new_id(doc)
        return await self._counted(self._c.upsert_item(doc))

    async def replace(self, doc: Doc, *, etag: str | None = None) -> Doc:
        """Replace; with `etag`, only if nobody changed the item since it was read (else Conflict)."""
        if not valid_id(doc.get("id")):
            raise NotFound(f"{str(doc.get('id'))[:100]!r} not found", details={"id": str(doc.get("id"))[:100]})
        kwargs: dict[str, Any] = {}
        if etag:
            kwargs = {"etag": etag, "match_condition": MatchConditions.IfNotModified}
        try:
            return await self._counted(self._c.replace_item(doc["id"], doc, **kwargs))
        except exceptions.CosmosAccessConditionFailedError:
            raise Conflict("the item changed since it was read", details={"id": doc["id"]}) from None
        except exceptions.CosmosResourceNotFoundError:
            raise NotFound(f"{doc['id']!r} not found", details={"id": doc["id"]}) from None

    async def patch(
        self, item_id: str, pk: str, operations: list[dict[str, Any]], *, condition: str | None = None
    ) -> Doc:
        """Apply patch operations (`incr`, `set`, `add`...) atomically on the server.

        `condition` is a filter predicate (`from c where ...`): when the item does not satisfy it, nothing
        changes and PreconditionFailed is raised. Values inlined in it must come from code, never callers.
        """
        if not valid_id(item_id):
            raise NotFound(f"{item_id[:100]!r} not found", details={"id": item_id[:100]})
        kwargs: dict[str, Any] = {"filter_predicate": condition} if condition else {}
        try:
            return await self._counted(
                self._c.patch_item(item_id, partition_key=pk, patch_operations=operations, **kwargs)
            )
        except exceptions.CosmosResourceNotFoundError:
            raise NotFound(f"{item_id!r} not found", details={"id": item_id}) from None
        except exceptions.CosmosAccessConditionFailedError:
            raise PreconditionFailed("the item does not satisfy the condition", details={"id": item_id}) from None

    async def batch(self, pk: str, operations: Sequence[BatchOp]) -> list[Doc | None]:
        """Run `operations` on partition `pk` as one transaction, in one round trip: all apply or none does.

        Returns each operation's resulting document (None for a delete), in order; a patch's result shows
        the values after its `incr`s. A failure raises for the first failing operation (details name its
        index): PreconditionFailed (a patch condition or etag), NotFound (the item to patch, replace,
        delete or read is missing), Conflict (a create of an existing id).
        """
        if not 0 < len(operations) <= MAX_BATCH_OPERATIONS:
            raise ValueError(f"a batch holds 1 to {MAX_BATCH_OPERATIONS} operations")
        for index, op in enumerate(operations):
            target = _batch_target(op)
            if not valid_id(target):
                if op[0] in ("create", "upsert"):
                    _check_new_id({"id": target})
                shown = str(target)[:100]
                raise NotFound(f"{shown!r} not found", details={"id": shown, "operation": index})
        try:
            results = await self._counted(self._c.execute_item_batch(list(operations), partition_key=pk))
        except exceptions.CosmosBatchOperationError as exc:
            index = exc.error_index or 0
            target = str(_batch_target(operations[index]))
            details = {"id": target, "operation": index}
            if exc.status_code == 412:
                raise PreconditionFailed(f"{target!r} does not satisfy the condition", details=details) from None
            if exc.status_code == 404:
                raise NotFound(f"{target!r} not found", details=details) from None
            if exc.status_code == 409:
                raise Conflict(f"{target!r} already exists", details=details) from None
            raise
        return [r.get("resourceBody") for r in results]

    async def delete(self, item_id: str, pk: str) -> bool:
        """Delete; False when there was nothing to delete."""
        if not valid_id(item_id):
            return False
        try:
            await self._counted(self._c.delete_item(item_id, partition_key=pk))
            return True
        except exceptions.CosmosResourceNotFoundError:
            return False

    async def query(
        self,
        pk: str,
        where: str = "",
        params: dict[str, Any] | None = None,
        *,
        order_by: str = "",
        max_items: int = 50,
        continuation: str | None = None,
        fields: Sequence[str] = (),
        select: str = "",
    ) -> tuple[list[Doc], str | None]:
        """One page of a partition-scoped query and the token for the next page (None at the end).

        `fields` projects each item onto those top-level fields (a list page need not carry whole documents).
        `select` is a projection written in code (`c.id, c.alert.name AS alert_name, ARRAY(...) AS calls`) for
        reads that need parts of nested fields; never a caller's text. At most one of the two.
        """
        return await self._query_page(
            pk,
            where,
            params or {},
            order_by=order_by,
            max_items=max_items,
            continuation=continuation,
            fields=fields,
            select=select,
        )

    async def query_all(
        self, pk: str, where: str = "", params: dict[str, Any] | None = None, *, order_by: str = "", limit: int = 1000
    ) -> list[Doc]:
        items: list[Doc] = []
        token: str | None = None
        while len(items) < limit:
            page, token = await self._query_page(
                pk, where, params or {}, order_by=order_by, max_items=min(100, limit - len(items)), continuation=token
            )
            items.extend(page)
            if not token:
                break
        return items

    async def _query_page(
        self,
        pk: str,
        where: str,
        params: dict[str, Any],
        *,
        order_by: str = "",
        max_items: int = 50,
        continuation: str | None = None,
        fields: Sequence[str] = (),
        select: str = "",
    ) -> tuple[list[Doc], str | None]:
        _check_continuation(continuation)
        if any(not _FIELD.fullmatch(f) for f in fields):
            raise ValueError("projected fields are top-level identifiers")
        if select and fields:
            raise ValueError("project with `fields` or with `select`, not both")
        projection = select or (", ".join(f"c.{f}" for f in fields) if fields else "*")
        sql = f"SELECT {projection} FROM c WHERE c.{self.spec.pk_field} = @__pk"
        if where:
            sql += f" AND ({where})"
        if order_by:
            sql += f" ORDER BY {order_by}"
        parameters = [{"name": "@__pk", "value": pk}] + [{"name": k, "value": v} for k, v in params.items()]
        # by_page is annotated as a plain AsyncIterator; what it returns is azure.core's page iterator,
        # which carries the continuation token of the page it last fetched.
        pager = cast(
            "AsyncPageIterator[Doc]",
            self._c.query_items(sql, parameters=parameters, partition_key=pk, max_item_count=max_items).by_page(
                continuation
            ),
        )
        self.requests += 1
        try:
            page = await pager.__anext__()
        except StopAsyncIteration:
            return [], None
        except exceptions.CosmosHttpResponseError as exc:
            # A forged or mangled token is the caller's mistake (Cosmos answers 400), not a server error.
            if continuation is not None and exc.status_code == 400:
                raise _bad_continuation() from None
            raise
        items = [doc async for doc in page]
        return items, pager.continuation_token or None


def _check_new_id(doc: Doc) -> None:
    if not valid_id(doc.get("id")):
        raise ValidationFailed.on_field(
            "id",
            "not a valid id",
            "an id may hold only printable ASCII without '/', '\\\\', '?' or '#', at most 255 characters",
        )


async def _created_by_someone(create: Awaitable[R], existing: Callable[[], R]) -> R:
    """`create_*_if_not_exists`, when another process may create the same resource at the same moment.

    The SDK reads, then creates on a 404: two processes bootstrapping one database (two local hosts on one
    stack, a host and a test) can both read 404 and the slower create answers 409. The resource exists then,
    which is what was asked for: use it instead of failing the request that happened to bootstrap.
    """
    try:
        return await create
    except CosmosResourceExistsError:
        return existing()


class CosmosDatabase:
    """The process-wide Cosmos client and its containers; nothing connects until first use."""

    def __init__(self, settings: Settings, containers: Iterable[ContainerSpec], *, database: str | None = None) -> None:
        self._settings = settings
        self.catalogue = catalogue_of(containers)
        self.database_name = database or settings.cosmos_database
        self._client: CosmosClient | None = None
        self._db: DatabaseProxy | None = None
        self._containers: dict[str, CosmosContainer] = {}
        self._lock = asyncio.Lock()

    @property
    def configured(self) -> bool:
        return bool(self._settings.cosmos_endpoint)

    def _build_client(self) -> CosmosClient:
        s = self._settings
        if not s.cosmos_endpoint:
            raise NotConfigured(
                "Cosmos DB is not configured",
                recovery_suggestions=["Set COSMOS_ENDPOINT (and COSMOS_KEY or a managed identity)."],
            )
        if s.cosmos_key:
            credential: Any = s.cosmos_key
        else:
            # Deferred: azure.identity (0.2 s to import) only for a managed identity, never with a key.
            from azure.identity.aio import DefaultAzureCredential

            credential = DefaultAzureCredential()
        # The SDK's defaults wait 65 s per read and retry each failure three more times: a hung store held a
        # request for minutes. One retry within store_timeout_s each, then the edge answers 503 (storage/outage.py).
        return CosmosClient(
            s.cosmos_endpoint,
            credential=credential,
            connection_verify=s.cosmos_verify_tls,
            connection_timeout=s.store_timeout_s,
            read_timeout=s.store_timeout_s,
            retry_connect=1,
            retry_read=1,
        )

    async def container(self, name: str) -> CosmosContainer:
        """The named container from the catalogue, created first when this process bootstraps locally."""
        if name in self._containers:
            return self._containers[name]
        spec = self.catalogue.get(name)
        if spec is None:
            raise KeyError(f"unknown container {name!r}: declare it in its capability's containers")
        async with self._lock:
            if name not in self._containers:
                if self._client is None:
                    self._client = self._build_client()  # NotConfigured without an endpoint
                client, db = self._client, self._db
                if db is None:
                    if self._settings.create_resources:
                        db = await _created_by_someone(
                            client.create_database_if_not_exists(self.database_name),
                            lambda: client.get_database_client(self.database_name),
                        )
                    else:
                        db = client.get_database_client(self.database_name)
                    self._db = db
                raw = await self._ensure(db, spec)
                self._containers[name] = CosmosContainer(raw, spec, local_compat=self._settings.cosmos_local_compat)
        return self._containers[name]

    async def _ensure(self, db: DatabaseProxy, spec: ContainerSpec) -> ContainerProxy:
        if not self._settings.create_resources:
            return db.get_container_client(spec.name)

        return await _created_by_someone(
            db.create_container_if_not_exists(
                spec.name,
                partition_key=PartitionKey(path=spec.partition_key),
                indexing_policy=spec.indexing_policy(),
                default_ttl=spec.default_ttl,  # None sets no TTL, as omitting it does
            ),
            lambda: db.get_container_client(spec.name),
        )

    async def bootstrap(self, names: Sequence[str] | None = None) -> None:
        for spec in self.catalogue.values():
            if names is None or spec.name in names:
                await self.container(spec.name)

    async def drop_database(self) -> None:
        """Delete this database (tests use one database per run)."""
        if self._client is None:
            self._client = self._build_client()
        await self._client.delete_database(self.database_name)
        self._db = None
        self._containers.clear()

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
            self._db = None
            self._containers.clear()
