"""Index an app in the real Python language worker and report what it would send the Functions host
(its functions, and the capabilities it announces: `HttpUri` when the app is on HTTP streams).

Two halves:
- run as a script inside the worker's own venv (`.venv-worker/bin/python -I devhost/real_worker.py APP_DIR`,
  Python 3.13 with PyPI `azure-functions-runtime`), it drives the worker's own entry points the way its
  gRPC proxy does: `worker_init_request` (loads the binding registry, imports function_app.py, indexes
  and validates every function through `Registry.add_indexed_function`) and then
  `functions_metadata_request`, and prints the metadata response as JSON on stdout;
- `index_in_real_worker()` runs that script from the app's venv and returns the parsed report.

The gRPC message classes come from the proxy at run time, never from the worker package; the script
passes record classes with the same field names and the enum values of the host's FunctionRpc.proto
(BindingInfo.Direction in=0 out=1 inout=2; DataType undefined=0 string=1 binary=2 stream=3), which is
all the worker reads from them. No grpcio/protobuf is needed, so the worker venv holds only the app's
dependencies plus the worker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WORKER_VENV = ROOT / ".venv-worker"


def worker_python() -> Path:
    """The worker venv's interpreter (FIREBREAK_WORKER_PYTHON overrides; `make worker-venv` builds the default)."""
    return Path(os.environ.get("FIREBREAK_WORKER_PYTHON") or WORKER_VENV / "bin" / "python")


def index_in_real_worker(
    app_dir: Path, env: dict[str, str] | None = None, python: Path | None = None, call: str | None = None
) -> dict[str, Any]:
    """The worker's report for `app_dir`: {"status", "exception", "capabilities", "worker", "functions": [...]}.

    With `call` (an HTTP function's name, GET with no route parameters), the report also has "call":
    {"status", "headers", "body"} of one real invocation, as the host makes it under HTTP streams: an
    InvocationRequest to the worker and the HTTP request to its internal server (`HttpUri`), whose answer
    is the function's. Raises FileNotFoundError naming `make worker-venv` when the worker venv is missing.
    """
    python = python or worker_python()
    if not python.exists():
        raise FileNotFoundError(
            f"{python} is missing: run `make worker-venv` (make test does) to build the real worker's venv"
        )
    run_env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    run_env.update(env or {})
    # -I: the worker venv's own site-packages only, nothing from the app venv or the script's folder.
    done = subprocess.run(
        [str(python), "-I", str(Path(__file__).resolve()), str(app_dir.resolve()), *([call] if call else [])],
        capture_output=True,
        text=True,
        env=run_env,
        timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the real worker probe failed ({done.returncode}):\n{done.stderr[-4000:]}")
    report: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return report


# ---- the half that runs inside the worker venv ---------------------------------------------------


def _protos() -> Any:
    """Stand-ins for the proxy's generated FunctionRpc message classes (see the module docstring)."""
    import types

    class Message:
        def __init__(self, **fields: Any) -> None:
            self.__dict__.update(fields)

    class BindingInfo(Message):
        undefined, string, binary, stream = 0, 1, 2, 3  # DataType
        out, inout = 1, 2  # Direction (`in` = 0 is a Python keyword; the worker never reads it)

    class StatusResult(Message):
        Failure, Success, Cancelled = 0, 1, 2

    class TypedData(Message):
        def WhichOneof(self, _group: str) -> str | None:  # the protobuf API the worker calls
            return next((k for k in ("http", "bytes", "string") if k in self.__dict__), None)

    class ParameterBinding(Message):
        def WhichOneof(self, _group: str) -> str:
            return "data"

    names = (
        "WorkerInitResponse",
        "InvocationResponse",
        "RpcHttp",
        "FunctionMetadataResponse",
        "RpcFunctionMetadata",
        "RpcRetryOptions",
        "WorkerMetadata",
        "RpcException",
    )
    return types.SimpleNamespace(
        BindingInfo=BindingInfo,
        StatusResult=StatusResult,
        TypedData=TypedData,
        ParameterBinding=ParameterBinding,
        **{n: type(n, (Message,), {}) for n in names},
    )


def _value(x: Any) -> Any:
    return x.value if hasattr(x, "value") else x


def start_invocation(handle_event: Any, fn: Any, input_data: list[Any]) -> tuple[str, Any]:
    """The InvocationRequest of function `fn` with `input_data` (its bindings), handed to the worker as the host
    does: (the invocation id, the task that answers it). With HTTP streams the request itself goes to the worker's
    server separately, tagged with that id."""
    import asyncio
    import types
    import uuid

    invocation_id = str(uuid.uuid4())
    invocation = types.SimpleNamespace(
        invocation_id=invocation_id,
        function_id=fn.function_id,
        input_data=input_data,
        trigger_metadata={},
        trace_context=types.SimpleNamespace(trace_parent="", trace_state="", attributes={}),
        retry_context=types.SimpleNamespace(retry_count=0, max_retry_count=0, exception=None),
    )
    invoked = asyncio.ensure_future(
        handle_event.invocation_request(
            types.SimpleNamespace(request=types.SimpleNamespace(invocation_request=invocation), properties={})
        )
    )
    return invocation_id, invoked


async def _invoke_over_http_streams(handle_event: Any, protos: Any, fn: Any, http_uri: str) -> dict[str, Any]:
    """One GET of HTTP function `fn` as the host makes it with HTTP streams on: the InvocationRequest (the
    trigger's metadata only) and, beside it, the request itself to the worker's server, tagged with the
    invocation id; the function's answer comes back on that HTTP response."""
    import asyncio

    import aiohttp

    trigger = next(json.loads(raw) for raw in fn.raw_bindings if json.loads(raw)["type"] == "httpTrigger")
    url = f"http://127.0.0.1/api/{trigger['route']}"
    http = protos.RpcHttp(
        method="GET", url=url, headers={"host": "127.0.0.1"}, params={}, query={}, body=protos.TypedData()
    )
    bindings = [protos.ParameterBinding(name=trigger["name"], data=protos.TypedData(http=http))]
    invocation_id, invoked = start_invocation(handle_event, fn, bindings)
    headers = {"x-ms-invocation-id": invocation_id, "host": "127.0.0.1"}

    async def get() -> dict[str, Any]:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as session:
            for _ in range(100):  # the server was started as a task of this loop: wait until it listens
                try:
                    async with session.get(f"{http_uri}/api/{trigger['route']}", headers=headers) as answer:
                        return {"status": answer.status, "headers": dict(answer.headers), "body": await answer.text()}
                except aiohttp.ClientConnectorError:
                    await asyncio.sleep(0.1)
            raise RuntimeError(f"the worker's HTTP server at {http_uri} never listened")

    fetched = asyncio.ensure_future(get())
    await asyncio.wait({fetched, invoked}, return_when=asyncio.FIRST_COMPLETED)
    response = await invoked
    if response.result.status != protos.StatusResult.Success and not fetched.done():
        # A failed invocation before the worker took the request leaves the HTTP request waiting forever.
        fetched.cancel()
        return {"invocation": "Failure", "exception": getattr(response.result.exception, "message", None)}
    call = await fetched
    call["invocation"] = "Success" if response.result.status == protos.StatusResult.Success else "Failure"
    return call


def _probe(app_dir: str, call: str | None = None) -> dict[str, Any]:
    import asyncio
    import types

    from azure_functions_runtime import handle_event
    from azure_functions_runtime.version import VERSION

    protos = _protos()
    # The proxy puts the app directory first on sys.path and starts in it before WorkerInitRequest.
    sys.path.insert(0, app_dir)
    os.chdir(app_dir)
    init = types.SimpleNamespace(
        worker_init_request=types.SimpleNamespace(capabilities={}, function_app_directory=app_dir)
    )
    # A real host: with HTTP streams on, the worker starts its internal HTTP server (uvicorn) on it, at a
    # port of its own choosing, and reports the URL as the `HttpUri` capability.
    request = types.SimpleNamespace(request=init, properties={"host": "127.0.0.1", "protos": protos})

    async def run() -> tuple[Any, Any, dict[str, Any] | None]:
        started = await handle_event.worker_init_request(request)
        metadata = await handle_event.functions_metadata_request(types.SimpleNamespace(request=None, properties={}))
        if call is None:
            return started, metadata, None
        fn = next(f for f in metadata.function_metadata_results if f.name == call)
        http_uri = dict(started.capabilities)["HttpUri"]
        return started, metadata, await _invoke_over_http_streams(handle_event, protos, fn, http_uri)

    started, metadata, answered = asyncio.run(run())
    report: dict[str, Any] = {
        "status": "Success" if started.result.status == protos.StatusResult.Success else "Failure",
        "exception": getattr(getattr(started.result, "exception", None), "message", None),
        # HttpUri / RequiresRouteParameters: the worker's HTTP streams are on (its internal server started).
        "capabilities": dict(getattr(started, "capabilities", None) or {}),
        "worker": {
            "package": "azure-functions-runtime",
            "version": VERSION,
            "python": f"{sys.version_info.major}.{sys.version_info.minor}",
        },
        "functions": [],
    }
    if answered is not None:
        report["call"] = answered
    for fn in metadata.function_metadata_results or []:
        report["functions"].append(
            {
                "name": fn.name,
                "entry_point": fn.entry_point,
                "script_file": fn.script_file,
                "directory": fn.directory,
                "properties": dict(fn.properties),
                "bindings": {
                    name: {"type": b.type, "direction": _value(b.direction), "data_type": _value(b.data_type)}
                    for name, b in fn.bindings.items()
                },
                "raw_bindings": [json.loads(raw) for raw in fn.raw_bindings],
            }
        )
    return report


if __name__ == "__main__":
    # The worker logs to stderr; stdout carries only the report, as its last line.
    print(json.dumps(_probe(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)))
