"""`python -m devhost.lockcheck`: the dependency locks are current and the venvs match them (run by `make test`).

Two locks, both written by `make lock` (uv pip compile):
- requirements.lock: requirements-dev.txt (which includes requirements.txt) for every Python from 3.11
  (`--universal`, with environment markers), installed into .venv by `make setup`;
- requirements-worker.lock: requirements-worker.txt for Python 3.13, installed into .venv-worker;
- requirements-infra.lock: requirements-infra.txt (checkov) for Python 3.11, installed into .venv-infra.

Checks, each failing with what to run:
1. every direct requirement (following `-r`) is pinned `==` and the lock holds the same version for each
   Python the pin applies to (3.11, 3.12, 3.13): an edited requirements file with a stale lock fails;
2. with `--installed PYTHON`, the distributions installed for that interpreter are exactly the lock's
   entries that apply to it (same versions; pip/setuptools/wheel aside).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PYTHONS = ("3.11", "3.12", "3.13")
_TOOLING = {"pip", "setuptools", "wheel"}
LOCKS = {  # lock file -> (requirements it locks, Pythons it covers)
    "requirements.lock": ("requirements-dev.txt", PYTHONS),
    "requirements-worker.lock": ("requirements-worker.txt", ("3.13",)),
    "requirements-infra.lock": ("requirements-infra.txt", ("3.11",)),
}


@dataclass(frozen=True)
class Pin:
    name: str
    version: str | None  # None when not pinned with ==
    marker: Marker | None
    source: str

    def applies(self, python: str) -> bool:
        return self.marker is None or self.marker.evaluate(_environment(python))


def _environment(python: str) -> dict[str, str]:
    """Marker environment for `python` on this platform (the locks are for Linux x86_64 / Azure's Linux)."""
    from packaging.markers import default_environment

    env = {k: str(v) for k, v in default_environment().items()}
    env.update(python_version=python, python_full_version=f"{python}.0")
    return env


def read_requirements(path: Path, seen: set[Path] | None = None) -> list[Pin]:
    """Requirement lines of `path` and of the files it includes with `-r`."""
    seen = seen if seen is not None else set()
    path = path.resolve()
    if path in seen:
        return []
    seen.add(path)
    pins: list[Pin] = []
    for raw in path.read_text().splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement ")):
            pins += read_requirements(path.parent / line.split(None, 1)[1], seen)
            continue
        if line.startswith("-"):
            continue
        req = Requirement(line)
        exact = [s.version for s in req.specifier if s.operator == "=="]
        pins.append(
            Pin(
                canonicalize_name(req.name),
                exact[0] if len(exact) == 1 and len(req.specifier) == 1 else None,
                req.marker,
                f"{path.name}: {line}",
            )
        )
    return pins


def locked_for(lock: list[Pin], python: str) -> dict[str, str]:
    """name -> version of the lock entries that apply to `python`."""
    return {p.name: p.version for p in lock if p.applies(python) and p.version}


def check_pins(requirements: Path, lock_path: Path, pythons: tuple[str, ...]) -> list[str]:
    problems = []
    lock = read_requirements(lock_path)
    for pin in read_requirements(requirements):
        if pin.version is None:
            problems.append(
                f"{pin.source}: not pinned with == (direct dependencies are pinned; the lock holds the rest)"
            )
            continue
        for python in pythons:
            if not pin.applies(python):
                continue
            locked = locked_for(lock, python).get(pin.name)
            if locked != pin.version:
                problems.append(f"{pin.source}: {lock_path.name} has {locked or 'nothing'} for Python {python}")
    return problems


def installed(python: str) -> tuple[str, dict[str, str]]:
    """(X.Y, name -> version) of what the interpreter `python` has installed."""
    script = (
        "import sys, json, importlib.metadata as m; print(json.dumps(['%d.%d' % sys.version_info[:2], "
        "{d.metadata['Name']: d.version for d in m.distributions()}]))"
    )
    out = subprocess.run([python, "-I", "-c", script], capture_output=True, text=True, check=True).stdout
    version, dists = json.loads(out)
    return version, {canonicalize_name(k): v for k, v in dists.items()}


def check_installed(python: str, lock_path: Path) -> list[str]:
    version, have = installed(python)
    want = locked_for(read_requirements(lock_path), version)
    problems = [
        f"{name}: {lock_path.name} has {v}, {python} has {have.get(name) or 'nothing'}"
        for name, v in sorted(want.items())
        if have.get(name) != v
    ]
    problems += [
        f"{name} {v}: installed in {python} but not in {lock_path.name}"
        for name, v in sorted(have.items())
        if name not in want and name not in _TOOLING
    ]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="devhost.lockcheck", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--installed",
        nargs=2,
        action="append",
        default=[],
        metavar=("LOCK", "PYTHON"),
        help="also check that interpreter PYTHON has exactly LOCK's applicable entries installed",
    )
    args = parser.parse_args(argv)
    problems = []
    for lock_name, (requirements, pythons) in LOCKS.items():
        problems += check_pins(ROOT / requirements, ROOT / lock_name, pythons)
    for lock_name, python in args.installed:
        problems += check_installed(python, ROOT / lock_name)
    if problems:
        print("dependency lock check failed:\n  " + "\n  ".join(problems), file=sys.stderr)
        print(
            "fix: `make lock` after editing requirements*.txt; `make clean-venvs setup` for a venv that drifted",
            file=sys.stderr,
        )
        return 1
    print(f"locks current ({', '.join(LOCKS)}); {len(args.installed)} venv(s) match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
