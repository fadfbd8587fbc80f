"""How numbers read in the report's tables and the terminal summary.

Scores are points on 0-100 with one decimal, an interval in brackets after its estimate
(`62.4 [55.1, 69.8]`); rates are percentages; a value nobody measured reads `MISSING`.
"""

from __future__ import annotations

from stages.report.inputs import Interval

MISSING = "—"


def fmt_number(value: float | None, digits: int = 1, signed: bool = False) -> str:
    """A number with fixed decimals (`+` before positives when `signed`), or `MISSING`."""
    if value is None:
        return MISSING
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def fmt_interval(interval: Interval | None, digits: int = 1, signed: bool = False) -> str:
    """`[low, high]`, or `MISSING` when the interval or one of its ends is unknown."""
    if interval is None or interval.low is None or interval.high is None:
        return MISSING
    return f"[{fmt_number(interval.low, digits, signed)}, {fmt_number(interval.high, digits, signed)}]"


def fmt_estimate(value: float | None, interval: Interval | None, digits: int = 1,
                 signed: bool = False) -> str:
    """`62.4 [55.1, 69.8]`: the estimate and its interval; the estimate alone without one."""
    text = fmt_number(value, digits, signed)
    bounds = fmt_interval(interval, digits, signed)
    return text if value is None or bounds == MISSING else f"{text} {bounds}"


def fmt_percent(rate: float | None, digits: int = 1) -> str:
    """A rate in [0, 1] as a percentage: `0.875` -> `87.5 %`."""
    return MISSING if rate is None else f"{100 * rate:.{digits}f} %"


def fmt_count(value: int | float | None) -> str:
    """An integer with thousands separators: `1234567` -> `1,234,567`."""
    return MISSING if value is None else f"{round(value):,}"


def fmt_usd(value: float | None) -> str:
    """Dollars with four decimals (per-query costs are often below a cent), or `MISSING` if unknown."""
    return MISSING if value is None else f"${value:,.4f}"


def fmt_ratio(value: float | None) -> str:
    """A cost ratio: `1.85×`."""
    return MISSING if value is None else f"{value:.2f}×"


def ci_label(intervals: list[Interval | None]) -> str:
    """`95 % CI` when the known intervals share one level, `no CI` when none is known, else `CI`."""
    known = [interval for interval in intervals if interval is not None]
    levels = {interval.level for interval in known if interval.level is not None}
    if not known:
        return "no CI"
    return f"{100 * levels.pop():g} % CI" if len(levels) == 1 else "CI"
