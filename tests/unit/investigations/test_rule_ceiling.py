"""`devhost.rule_scores --ceiling`: how much of a set's miss is reading and how much is knowledge."""

from __future__ import annotations

from pathlib import Path

from devhost import rule_scores

_HELDOUT = Path(__file__).parents[2] / "fixtures" / "investigations_blind3"


def test_the_ceilings_are_ordered_and_reading_is_not_all_of_the_gap() -> None:
    files = sorted(_HELDOUT.glob("*.json"))[:6]
    c = rule_scores.ceiling(files)
    # Adding text can only find more keyword groups: report <= all fetched <= all offered.
    assert 0.0 <= c.report <= c.fetched <= c.offered <= 1.0
    # On a held-out set some expected words are in no output at all: even every byte offered misses them.
    assert c.offered < 1.0


def test_the_command_prints_one_line_per_directory(capsys) -> None:
    assert rule_scores.main([str(_HELDOUT), "--ceiling"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1
    assert "all fetched output" in out[0]
    assert "all offered" in out[0]
