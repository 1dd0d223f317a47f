"""The cold-start bench names the heaviest first-request imports from `-X importtime`: only lines after the
child's mark, each module's own time summed by top-level package."""

from __future__ import annotations

from benchmarks.cold_start_first_call import heaviest_first_call_imports
from benchmarks.first_call_child import FIRST_CALL_MARK

STDERR = f"""import time: self [us] | cumulative | imported package
import time:    900000 |     900000 | fastapi
{FIRST_CALL_MARK}
import time:    250000 |     250000 |       mcp_types._v2026_07_28
import time:    200000 |     450000 |     mcp_types
import time:     30000 |     480000 |   shared.investigations.mcp_servers
import time:    100000 |     580000 | shared.app.wiring
some other line on stderr
"""


def test_only_first_request_imports_count_summed_by_package() -> None:
    assert heaviest_first_call_imports(STDERR) == [
        {"package": "mcp_types", "ms": 450.0},
        {"package": "shared", "ms": 130.0},
    ]


def test_top_keeps_the_heaviest() -> None:
    assert heaviest_first_call_imports(STDERR, top=1) == [{"package": "mcp_types", "ms": 450.0}]
