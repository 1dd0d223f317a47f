"""A POST with a body, answered as a stream, through the real worker's HTTP streams (Python 3.13,
azure-functions-runtime): the worker's internal server is the app's own web extension on Starlette
(functions/http_streams.py, issue #30), which must hand the body in and the streamed answer out as they are."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from devhost.real_worker import worker_python

ROOT = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).with_name("real_worker_post_probe.py")


def test_an_mcp_tools_call_is_posted_and_streamed_back_through_the_worker() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "FIREBREAK_"))}
    env.update(
        {
            "AzureWebJobsStorage": "UseDevelopmentStorage=true",
            "FIREBREAK_DEV_MODE": "true",
            "FIREBREAK_MCP_ALLOWED_HOSTS": "127.0.0.1",
        }
    )
    done = subprocess.run(
        [str(worker_python()), "-I", str(PROBE), str(ROOT)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    call = json.loads(done.stdout.splitlines()[-1])
    assert call["invocation"] == "Success", call
    assert call["status"] == 200, call
    assert call["content_type"].startswith("text/event-stream"), call
    events = [json.loads(line[len("data: ") :]) for line in call["body"].splitlines() if line.startswith("data: ")]
    assert events[-1]["id"] == 1, events
    assert events[-1]["result"]["isError"] is False, events
    assert events[-1]["result"]["structuredContent"]["source"] == "dev", events
