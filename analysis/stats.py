"""Small statistics for the metrics: Wilson intervals for rates, standard errors for means.

Every rate the metrics report carries its count of opportunities ``n`` and its
count of successes ``k``; every mean carries ``n`` and a standard error.  These
helpers turn those counts into intervals, both for single numbers and for whole
polars frames (the shape :func:`spadework.analysis.metrics.run` returns).
"""

from __future__ import annotations

import math

import polars as pl

Z95 = 1.959963984540054
"""The two-sided 95 % normal quantile."""

MIN_N = 5
"""The fewest observations of a player before a gap to others is judged (a leak, a strength): the
tests behind the judgements (a pooled z, Newcombe's interval) are large-sample ones, and one made
nil against a field that makes 10 % of them already gives z = 2.9."""


def wilson_interval(k: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of ``k`` successes in ``n`` trials, as ``(low, high)`` proportions in 0..1.

    With ``n == 0`` nothing is known and the interval is ``(0.0, 1.0)``.
    Raises ``ValueError`` when ``k`` is negative, ``n`` is negative or ``k > n``.
    """
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = (z / denom) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return (low, high)


def standard_error(sd: float | None, n: int) -> float | None:
    """Standard error of a mean from the sample standard deviation ``sd`` and the count ``n``.

    ``None`` when it cannot be estimated (``n < 2`` or ``sd`` unknown).
    """
    if sd is None or n < 2 or (isinstance(sd, float) and math.isnan(sd)):
        return None
    return sd / math.sqrt(n)


def mean_se(values) -> tuple[int, float | None, float | None]:
    """``(n, mean, standard error)`` of a sequence of numbers (sample standard deviation, n - 1).

    ``mean`` is ``None`` for an empty sequence, the standard error ``None`` below two values.
    """
    xs = [float(v) for v in values]
    n = len(xs)
    if n == 0:
        return (0, None, None)
    mean = sum(xs) / n
    if n < 2:
        return (n, mean, None)
    var = sum((x - mean) ** 2 for x in xs) / (n - 1)
    return (n, mean, math.sqrt(var) / math.sqrt(n))


def rate_se(k: float, n: float) -> float | None:
    """Normal-approximation standard error of the proportion ``k / n`` (``None`` when ``n == 0``)."""
    if n == 0:
        return None
    p = k / n
    return math.sqrt(p * (1 - p) / n)


def with_wilson(df: pl.DataFrame, k: str = "k", n: str = "n", z: float = Z95) -> pl.DataFrame:
    """Add ``value`` (k / n, null when n = 0), ``se``, ``low`` and ``high`` (Wilson) to a frame of counts.

    ``df`` must hold integer columns ``k`` and ``n``; other columns are kept.
    """
    kk = pl.col(k).cast(pl.Float64)
    nn = pl.col(n).cast(pl.Float64)
    p = kk / nn
    z2 = z * z
    denom = 1.0 + z2 / nn
    centre = (p + z2 / (2 * nn)) / denom
    half = (z / denom) * ((p * (1 - p) / nn + z2 / (4 * nn * nn)).sqrt())
    has = nn > 0
    return df.with_columns(
        value=pl.when(has).then(p).otherwise(None),
        se=pl.when(has).then((p * (1 - p) / nn).sqrt()).otherwise(None),
        low=pl.when(has & (kk > 0)).then(pl.max_horizontal(pl.lit(0.0), centre - half)).otherwise(0.0),
        high=pl.when(has & (kk < nn)).then(pl.min_horizontal(pl.lit(1.0), centre + half)).otherwise(1.0),
    )


def poisson_score_interval(k: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Score interval of an event rate per observation: ``k`` events in ``n`` observations, taken as
    Poisson, as ``(low, high)`` events per observation: ``(k + z²/2 ∓ z·sqrt(k + z²/4)) / n``.  No
    event in ``n`` gives ``(0, z²/n)`` (3.84 / n at 95 %), where the normal interval is ``(0, 0)``.
    Raises ``ValueError`` for a negative ``k`` or an ``n`` below 1."""
    if k < 0 or n < 1:
        raise ValueError(f"need k >= 0 and n >= 1, got k={k}, n={n}")
    z2 = z * z
    half = z * math.sqrt(k + z2 / 4)
    return (max(0.0, (k + z2 / 2 - half) / n), (k + z2 / 2 + half) / n)


def widen_for_events(df: pl.DataFrame, total: str = "total", n: str = "n", z: float = Z95) -> pl.DataFrame:
    """Widen ``low``/``high`` of a mean of event counts (findings per hand) to cover the Poisson score
    interval of its ``total`` events in ``n`` observations (:func:`poisson_score_interval`): the
    normal interval keeps the spread of the counts (a cascade of findings in one hand), the Poisson
    one what rare events cannot show (no finding in 349 hands is 0-1.1 per 100, not 0-0)."""
    k, nn = pl.col(total).cast(pl.Float64), pl.col(n).cast(pl.Float64)
    z2 = z * z
    half = z * (k + z2 / 4).sqrt()
    has = nn >= 1
    p_low = pl.when(has).then(pl.max_horizontal(pl.lit(0.0), (k + z2 / 2 - half) / nn))
    p_high = pl.when(has).then((k + z2 / 2 + half) / nn)
    return df.with_columns(
        low=pl.when(has).then(pl.min_horizontal(pl.col("low"), p_low)).otherwise(pl.col("low")),
        high=pl.when(has).then(pl.max_horizontal(pl.col("high"), p_high)).otherwise(pl.col("high")),
    )


def with_mean_se(df: pl.DataFrame, mean: str = "mean", sd: str = "sd", n: str = "n", z: float = Z95) -> pl.DataFrame:
    """Add ``value`` (the mean), ``se`` (sd / sqrt(n), null below two values) and ``low``/``high``
    (mean -/+ z * se) to a frame holding ``mean``, ``sd`` and ``n`` columns.  ``mean`` and ``sd`` are dropped.
    """
    nn = pl.col(n).cast(pl.Float64)
    se = pl.when(nn >= 2).then(pl.col(sd).cast(pl.Float64) / nn.sqrt()).otherwise(None)
    out = df.with_columns(value=pl.col(mean).cast(pl.Float64), se=se)
    out = out.with_columns(
        se=pl.when(pl.col("se").is_nan()).then(None).otherwise(pl.col("se")),
    )
    out = out.with_columns(low=pl.col("value") - z * pl.col("se"), high=pl.col("value") + z * pl.col("se"))
    return out.drop([c for c in (mean, sd) if c in out.columns and c not in ("value",)])


__all__ = ["MIN_N", "Z95", "mean_se", "poisson_score_interval", "rate_se", "standard_error", "widen_for_events", "wilson_interval",
           "with_mean_se", "with_wilson"]
