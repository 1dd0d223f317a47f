"""`python -m devhost`: serve function_app.py on 127.0.0.1:7071 like `func start`, without Core Tools."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from aiohttp import web


def load_local_settings(app_dir: Path) -> int:
    """Copy local.settings.json `Values` into the environment without overriding what is already set (as func does)."""
    path = app_dir / "local.settings.json"
    if not path.exists():
        return 0
    values = json.loads(path.read_text()).get("Values", {})
    count = 0
    for key, value in values.items():
        if key not in os.environ:
            os.environ[key] = str(value)
            count += 1
    return count


# Settings that belong to one data directory's stack (its ports, its secrets key), not to the checkout: taken from
# the stack when the host is given --data-dir, so a second stack in the same checkout is not pointed at the first.
STACK_OWNED = ("AzureWebJobsStorage", "COSMOS_ENDPOINT", "COSMOS_KEY", "FIREBREAK_SECRETS_KEY")


def load_stack_settings(data_dir: Path) -> int:
    """The data directory's stack settings (STACK_OWNED) into the environment, unless already set there."""
    from devhost.stack import Stack

    settings = Stack.of(data_dir.resolve()).app_settings()
    count = 0
    for key in STACK_OWNED:
        if key not in os.environ:
            os.environ[key] = settings[key]
            count += 1
    return count


async def close_worker_deps(_app: web.Application) -> None:
    """Close the worker's clients (Cosmos, Blob, a capability's pooled ones) when the host stops: without it,
    Ctrl-C leaves them to the garbage collector at interpreter exit, which prints `Unclosed client session`
    tracebacks."""
    from functions import wiring

    if wiring.deps.cache_info().currsize:
        await wiring.deps().aclose()


def local_usage(base: str, function_key: str, keys_file: Path, stop: str = "make stop") -> str:
    """How to call the local host (printed by `make run`): the app's routes are anonymous at the host, as on Azure,
    and the app authenticates every call itself (dev mode answers without credentials; otherwise a workspace API
    key or an Entra token). The keys file now guards only the host's own Durable management API."""
    mcp = f"{base}/api/mcp"
    vscode = {"servers": {"firebreak": {"type": "http", "url": mcp}}}
    return "\n".join(
        [
            "",
            "Every /api route takes the app's own credentials (dev mode: none; else 'Authorization: Bearer fbk_...').",
            f"  curl:         curl {base}/api/tools",
            f"  VS Code (.vscode/mcp.json):  {json.dumps(vscode)}",
            f"  Claude Code:  claude mcp add --transport http firebreak {mcp}",
            f"  MCP Inspector: npx @modelcontextprotocol/inspector --cli {mcp} --transport http --method tools/list",
            (
                f"The Durable management API ({base}/runtime/webhooks/durabletask/...) takes the system key kept in"
                f" {keys_file}."
            ),
            f"Stop the emulators afterwards with '{stop}' (it saves this stack's Cosmos data first).",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="devhost", description=__doc__)
    parser.add_argument("--app-dir", default=".", type=Path)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", default=int(os.environ.get("DEVHOST_PORT", "7071")), type=int)
    parser.add_argument(
        "--no-local-settings", action="store_true", help="ignore local.settings.json (tests pass every setting)"
    )
    parser.add_argument(
        "--keys-file",
        type=Path,
        default=None,
        help=(
            "enforce the function and system keys kept in this file, generated on first use"
            " (make run: .local/keys.json)"
        ),
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="the local stack's data directory (make run: $(DATA)): its ports and secrets key win over"
        " local.settings.json",
    )
    args = parser.parse_args(argv)

    if args.data_dir:
        load_stack_settings(args.data_dir)
    loaded = 0 if args.no_local_settings else load_local_settings(args.app_dir)
    keys_in_force = None
    if args.keys_file:
        from devhost.keys import apply_local_keys

        keys_in_force = apply_local_keys(args.keys_file, os.environ)
    from shared.core.logging import configure_logging

    configure_logging(os.environ.get("FIREBREAK_LOG_LEVEL", "INFO"))
    log = logging.getLogger("devhost")
    from devhost.host import build_host
    from devhost.index import UnresolvedSetting

    base = f"http://{args.host}:{args.port}"
    try:
        host = build_host(args.app_dir, base)
    except UnresolvedSetting as exc:
        print(f"Firebreak offline host cannot start: {exc}", file=sys.stderr, flush=True)
        return 1
    print(
        f"Firebreak offline host ({loaded} settings from local.settings.json); functions:\n{host.describe()}",
        file=sys.stderr,
        flush=True,
    )
    print(
        f"MCP endpoint: {base}/api/mcp   tools: {base}/api/tools   health: {base}/api/health",
        file=sys.stderr,
        flush=True,
    )
    if keys_in_force:
        stop = "make stop" + (f" DATA={args.data_dir}" if args.data_dir and args.data_dir != Path(".local") else "")
        print(local_usage(base, keys_in_force["DEVHOST_FUNCTION_KEY"], args.keys_file, stop), flush=True)
    log.info("listening", extra={"url": base, "functions": len(host.functions), "keys_enforced": host.keys.configured})
    host.app.on_cleanup.append(close_worker_deps)
    web.run_app(host.app, host=args.host, port=args.port, print=None, access_log=None, handle_signals=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
