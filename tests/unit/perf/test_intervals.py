"""Order-statistic, histogram, Wilson and count intervals: the coverage they promise, bounded when they can be."""

from __future__ import annotations

import itertools
import math

import pytest

from shared.perf.analysis.intervals import (
    count_interval,
    histogram_interval,
    quantile_interval,
    quantile_ranks,
    separated,
    wilson_interval,
)
from shared.perf.parsers.snapshot import MAX_SAMPLES, kept_samples


def coverage(n: int, q: float, lo: int, hi: int) -> float:
    """P(x_(lo) <= true quantile <= x_(hi)) = P(lo <= B <= hi - 1), B ~ Binomial(n, q), summed directly."""
    return sum(math.comb(n, k) * q**k * (1 - q) ** (n - k) for k in range(lo, hi))


@pytest.mark.parametrize("n", [6, 10, 50, 100, 400, 1000])
@pytest.mark.parametrize("q", [0.5, 0.95])
def test_bounded_ranks_cover_the_quantile_at_the_confidence(n: int, q: float) -> None:
    lo, hi, bounded = quantile_ranks(n, q, 0.95)
    assert 1 <= lo <= hi <= n
    if bounded:
        assert coverage(n, q, lo, hi) >= 0.95


def test_too_few_samples_for_a_p95_are_not_bounded() -> None:
    # The 95th percentile of 7 samples lies above the largest one with probability 0.95**7 (about 70 %).
    assert not quantile_ranks(7, 0.95, 0.95)[2]
    assert quantile_ranks(7, 0.5, 0.95)[2]


def test_large_samples_use_the_normal_approximation_and_stay_in_range() -> None:
    lo, hi, bounded = quantile_ranks(100_000, 0.95, 0.95)
    assert bounded
    assert lo < 95_000 < hi
    assert hi - lo < 400


def test_histogram_and_sample_intervals_agree() -> None:
    values = sorted(float(v % 37) for v in range(200))
    histogram = [[v, values.count(v)] for v in sorted(set(values))]
    for q in (0.5, 0.95):
        a, b = quantile_interval(values, q, 0.95), histogram_interval(histogram, q, 0.95)
        assert (a.lo, a.hi) == (b.lo, b.hi)


def test_wilson_and_count_intervals() -> None:
    none = wilson_interval(0, 20, 0.95)
    some = wilson_interval(10, 20, 0.95)
    assert none.lo == 0.0 < none.hi < some.lo < 0.5 < some.hi < 1.0
    assert separated(none, wilson_interval(15, 20, 0.95))
    assert not separated(some, wilson_interval(11, 20, 0.95))
    assert count_interval(0, 0.95).hi == 0.0
    assert count_interval(100, 0.95).lo == pytest.approx(100 - 1.96 * 10, abs=0.01)


def test_kept_samples_are_capped_evenly_with_the_extremes() -> None:
    values = [float(i) for i in range(10_001, 0, -1)]
    kept = kept_samples(values)
    assert len(kept) == MAX_SAMPLES
    assert kept == sorted(kept)
    assert kept[0] == min(values)
    assert kept[-1] == max(values)
    gaps = {round(b - a) for a, b in itertools.pairwise(kept)}
    assert gaps <= {5, 6}  # 10,000 / 1,999 ≈ 5.0: evenly spaced order statistics
    assert kept_samples(values[:10]) == sorted(values[:10])
