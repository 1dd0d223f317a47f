"""`python -m shared.app.api_keys_cli mint|revoke`: manage workspace API keys (printed once; only a hash is kept)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

from shared.app.wiring import build_deps, load_settings


def _load_local_settings(path: Path | None) -> None:
    if path and path.exists():
        for key, value in json.loads(path.read_text()).get("Values", {}).items():
            os.environ.setdefault(key, str(value))


async def _run(args: argparse.Namespace) -> int:
    deps = build_deps(load_settings())
    try:
        if args.action == "mint":
            minted = await deps.api_keys.mint(args.workspace, args.user, args.name)
            print(json.dumps(minted.model_dump(), indent=2))
            print("Store the key now: it is not shown again. Use it as 'Authorization: Bearer <key>'.", file=sys.stderr)
        else:
            ok = await deps.api_keys.revoke(args.key_id)
            print("revoked" if ok else "no such key")
            return 0 if ok else 1
    finally:
        await deps.aclose()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="shared.app.api_keys_cli", description=__doc__)
    parser.add_argument(
        "--local-settings",
        type=Path,
        default=Path("local.settings.json"),
        help="read settings from this file first (local runs)",
    )
    parser.add_argument(
        "--no-local-settings",
        action="store_true",
        help="read the environment only (against a deployment: FIREBREAK_COSMOS_ENDPOINT and your az login)",
    )
    sub = parser.add_subparsers(dest="action", required=True)
    mint = sub.add_parser("mint", help="create a key for a workspace and user")
    mint.add_argument("--workspace", required=True)
    mint.add_argument("--user", required=True)
    mint.add_argument("--name", default="")
    revoke = sub.add_parser("revoke", help="revoke a key by its key id")
    revoke.add_argument("key_id")
    args = parser.parse_args(argv)
    if not args.no_local_settings:
        _load_local_settings(args.local_settings)
    return asyncio.run(_run(args))


if __name__ == "__main__":
    sys.exit(main())
