"""Deterministic confidence intervals for comparisons: quantiles (order statistics), proportions, counts.

- Quantiles: the distribution-free interval [x_(l), x_(u)] from the binomial distribution of the number
  of samples below the true quantile (exact sums up to EXACT_N samples, the normal approximation
  beyond). When there are too few samples to bound a side at the requested confidence, that side is
  the sample's extreme (min or max) and `bounded` is False: the interval is then narrower than the
  confidence promises, which is why comparisons also require a minimum number of samples.
- Histograms (slow-log Query_time): the same ranks, read from the cumulative bucket counts.
- Proportions (error rates): Wilson score interval. Counts (executions): normal approximation to the
  Poisson, c ± z·√c. Means of values known to lie in [min, max] (rows examined): Hoeffding's bound,
  mean ± (max - min)·√(ln(2 / (1 - confidence)) / 2n), wide but true whatever the distribution.

No resampling, no randomness: the same inputs give the same bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

EXACT_N = 1000


@dataclass(frozen=True)
class Interval:
    lo: float
    hi: float
    bounded: bool  # False: a side was clamped to the sample's extreme (too few samples)

    def as_list(self) -> list[float]:
        return [round(self.lo, 3), round(self.hi, 3)]


def z_value(confidence: float) -> float:
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def _binomial_cdf(n: int, p: float) -> list[float]:
    """P(B <= k) for k = 0..n, B ~ Binomial(n, p), 0 < p < 1 (pmf by recurrence in log space)."""
    log_pmf = n * math.log1p(-p)
    ratio = math.log(p) - math.log1p(-p)
    cdf, acc = [], 0.0
    for k in range(n + 1):
        acc += math.exp(log_pmf)
        cdf.append(min(acc, 1.0))
        if k < n:
            log_pmf += math.log(n - k) - math.log(k + 1) + ratio
    return cdf


@lru_cache(maxsize=4096)  # the same (n, q, confidence) recurs across classes and metrics
def quantile_ranks(n: int, q: float, confidence: float) -> tuple[int, int, bool]:
    """1-based ranks (l, u) with P(x_(l) <= true q-quantile <= x_(u)) >= confidence, clamped to 1..n."""
    tail = (1 - confidence) / 2
    if n > EXACT_N:
        z, centre = z_value(confidence), n * q
        spread = z * math.sqrt(n * q * (1 - q))
        lo, hi = math.floor(centre - spread), math.ceil(centre + spread) + 1
    else:
        cdf = _binomial_cdf(n, q)
        # Lower: the largest l with P(B <= l - 1) <= tail; upper: the smallest u with P(B >= u) <= tail.
        lo = max((k + 1 for k in range(n) if cdf[k] <= tail), default=0)
        hi = min((u for u in range(1, n + 1) if 1 - cdf[u - 1] <= tail), default=n + 1)
    bounded = lo >= 1 and hi <= n
    return max(1, min(lo, n)), max(1, min(hi, n)), bounded


def nearest_rank(n: int, q: float) -> int:
    """The 1-based rank the snapshot's percentiles use: ceil(q * n)."""
    return max(1, math.ceil(q * n))


def quantile_interval(ordered: list[float], q: float, confidence: float) -> Interval:
    """Interval for the q-quantile of sorted samples (at least one)."""
    lo, hi, bounded = quantile_ranks(len(ordered), q, confidence)
    return Interval(ordered[lo - 1], ordered[hi - 1], bounded)


def histogram_value(histogram: list[list[float]], rank: int) -> float:
    """The bucket value (its upper bound) holding the 1-based rank-th smallest observation."""
    seen = 0.0
    for value, count in histogram:
        seen += count
        if seen >= rank:
            return float(value)
    return float(histogram[-1][0])


def histogram_count(histogram: list[list[float]]) -> int:
    return int(sum(count for _, count in histogram))


def histogram_interval(histogram: list[list[float]], q: float, confidence: float) -> Interval:
    """Interval for the q-quantile of a [[value, count], ...] histogram sorted by value (non-empty)."""
    lo, hi, bounded = quantile_ranks(histogram_count(histogram), q, confidence)
    return Interval(histogram_value(histogram, lo), histogram_value(histogram, hi), bounded)


def wilson_interval(successes: int, n: int, confidence: float) -> Interval:
    z = z_value(confidence)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    lo = 0.0 if successes == 0 else max(0.0, centre - half)  # exact ends: float error would leave 1e-17
    hi = 1.0 if successes == n else min(1.0, centre + half)
    return Interval(lo, hi, True)


def count_interval(count: float, confidence: float) -> Interval:
    half = z_value(confidence) * math.sqrt(max(count, 0.0))
    return Interval(max(0.0, count - half), count + half, True)


def hoeffding_interval(mean: float, lo: float, hi: float, n: int, confidence: float) -> Interval:
    half = (hi - lo) * math.sqrt(math.log(2 / (1 - confidence)) / (2 * n))
    return Interval(max(lo, mean - half), min(hi, mean + half), True)


def separated(baseline: Interval, candidate: Interval) -> bool:
    """True when the intervals do not overlap (the candidate lies wholly above or below the baseline)."""
    return candidate.lo > baseline.hi or candidate.hi < baseline.lo
