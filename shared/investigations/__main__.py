"""`python -m shared.investigations scenario FILE.json [FILE.json ...] [--format json|md]`.

Runs alert-investigation scenario files through the whole orchestration on the local Durable engine and
scores the reports (the runner is devhost/scenarios.py; `--help` there says more).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

USAGE = "usage: python -m shared.investigations scenario FILE.json [FILE.json ...] [--format json|md]"


def main(argv: list[str]) -> int:  # noqa: RET503  (os.execve does not return)
    if not argv or argv[0] != "scenario":
        print(USAGE, file=sys.stderr)
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    # The runner starts emulators and a dev host, so it lives in devhost/, which shared/ must never import
    # (the layer contract in pyproject.toml: the deployed app does not ship the dev host). The command is
    # therefore a new process: `python -m devhost.scenarios` with the same interpreter. This process found
    # `shared` through its own sys.path (the current directory of `-m`, a relative or absolute PYTHONPATH...),
    # which a child does not inherit; the repository root, absolute and first on PYTHONPATH, makes the child
    # import devhost from this same checkout whatever the current directory is. The current directory is kept,
    # so relative FILE.json paths mean what they meant here.
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root, *(p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p)])
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-m", "devhost.scenarios", *argv[1:]], env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
