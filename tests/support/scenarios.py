"""The alert-investigation scenarios (tests/fixtures/investigations, copied from ../shared/fixtures), served and
scored as their README says.

The helpers live in devhost/scenario_servers.py (the scenario command, devhost/scenarios.py, uses them and devhost
never imports tests); this module re-exports them with the fixtures' directory as the default.
"""

from __future__ import annotations

from pathlib import Path

from devhost import scenario_servers
from devhost.scenario_servers import TOOLS_FILE, Answer, all_tools, answer, load, score, tools_for
from devhost.stack import ROOT

# A copy of ../shared/fixtures/investigations (Apache-2.0, see its README and licence file): CI clones the repo alone.
FIXTURES = ROOT / "tests" / "fixtures" / "investigations"
HELDOUT = ROOT / "tests" / "fixtures" / "investigations_heldout"

__all__ = [
    "FIXTURES",
    "HELDOUT",
    "TOOLS_FILE",
    "Answer",
    "all_tools",
    "answer",
    "load",
    "scenario_files",
    "score",
    "tools_for",
]


def scenario_files(directory: Path = FIXTURES) -> list[Path]:
    """The scenario files of a directory (the glob the fixtures' README prescribes)."""
    return scenario_servers.scenario_files(directory)
