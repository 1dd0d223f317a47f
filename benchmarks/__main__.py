"""`python -m benchmarks`: start a private stack and host, run every benchmark, print and save the ratios."""

from __future__ import annotations

import json
import sys
import tempfile
import uuid
from pathlib import Path

from benchmarks import (
    cold_start,
    durable_engine,
    hostile_inputs,
    mcp_overhead,
    memory_ranking,
    perf_roundtrip,
    slowlog_parser,
    spx_trace,
)
from devhost.processes import HostProcess, start_stack
from devhost.stack import ROOT
from shared.app.wiring import load_settings


def main() -> int:
    results = [cold_start.run(), *slowlog_parser.run(), *spx_trace.run()]
    with tempfile.TemporaryDirectory(prefix="fb-bench-") as tmp:
        stack = start_stack(Path(tmp) / "stack")
        host = None
        try:
            env = {
                **stack.app_settings(),
                "FIREBREAK_COSMOS_DATABASE": f"bench-{uuid.uuid4().hex[:6]}",
                "FIREBREAK_LOG_LEVEL": "WARNING",
            }
            host = HostProcess(env, Path(tmp) / "host.log")
            host.wait_ready()
            results += mcp_overhead.run(host.base_url)
            host.stop()
            host = None
            results += durable_engine.run(stack.app_settings(), Path(tmp))
            results += hostile_inputs.run(env)
            results += perf_roundtrip.run(
                load_settings({**env, "FIREBREAK_COSMOS_DATABASE": f"bench-perf-{uuid.uuid4().hex[:6]}"})
            )
            results += memory_ranking.run(
                load_settings({**env, "FIREBREAK_COSMOS_DATABASE": f"bench-memory-{uuid.uuid4().hex[:6]}"})
            )
        finally:
            if host:
                host.stop()
            stack.stop()
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / "latest.json").write_text(json.dumps(results, indent=2) + "\n")
    width = max(len(r["name"]) for r in results)
    for r in results:
        detail = ", ".join(f"{k}={v}" for k, v in r.items() if k not in ("name", "ratio", "budget", "ok"))
        budget = f"budget {r['budget']}" if r["budget"] else "reported"
        print(
            f"{r['name']:<{width}}  ratio {r['ratio']:.3f}  ({budget})  {'OK' if r['ok'] else 'OVER BUDGET'}  {detail}"
        )
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
