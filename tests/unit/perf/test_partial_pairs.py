"""An SPX half without its other half is reported with pair_status "partial" and skipped; the rest is ingested."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.core.errors import ValidationFailed
from shared.perf.__main__ import _local_artifacts
from shared.perf.parsers.snapshot import build

FIXTURES = Path(__file__).parents[2] / "fixtures"
TINY = FIXTURES / "spx" / "spx-full-20261122_030646-vm-31166-1804289383"
WORKER = FIXTURES / "spx" / "spx-full-20261122_030652-vm-31184-846930886"
SLOW = FIXTURES / "slowlog" / "mysql80-sample.log"


def _paths(*paths: Path | str) -> list[Path]:
    return [Path(p) for p in paths]


def test_an_unpaired_half_is_skipped_and_reported_and_the_rest_ingested() -> None:
    whole = [Path(f"{TINY}.json"), Path(f"{TINY}.txt.gz"), SLOW]
    for lone in (Path(f"{WORKER}.json"), Path(f"{WORKER}.txt.gz")):
        built, detections = build(_local_artifacts([*whole, lone]))
        assert len(built.content["profiles"]) == 1
        assert built.content["queries"]
        [half] = [d for d in detections if d.name.endswith(lone.name)]
        assert (half.ok, half.metadata["pair_status"]) == (True, "partial")
        assert [s.name for s in built.skipped] == [half.name]
        assert "missing" in built.skipped[0].reason
        # The skipped half is not part of the snapshot: same content, same id as without it.
        assert built.snapshot_id == build(_local_artifacts(whole))[0].snapshot_id


def test_nothing_but_unpaired_halves_is_a_clear_error() -> None:
    with pytest.raises(ValidationFailed) as err:
        build(_local_artifacts([Path(f"{TINY}.json"), Path(f"{WORKER}.txt.gz")]))
    assert "nothing to ingest" in err.value.message
    assert {r["metadata"]["pair_status"] for r in err.value.details["results"]} == {"partial"}
