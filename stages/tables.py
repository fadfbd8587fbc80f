"""Values passed between readers, stages and the repository writer."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Table:
    """A tidy table with its key columns and the unit of every column (`"1"` if dimensionless).

    Key columns have no unit entry requirement; every other column must have one.
    """

    name: str
    frame: pd.DataFrame
    keys: tuple[str, ...]
    units: dict[str, str] = field(default_factory=dict)


class RawFormatError(ValueError):
    """Bad raw input. The message always names the file, the line (or record) and the problem."""

    def __init__(self, path: Path | str, line: int | None, problem: str):
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}")


QUARANTINE_COLUMNS = ("file", "line", "problem")


def quarantine_table(errors: list[RawFormatError]) -> Table:
    """Turn the errors a reader set aside into the `quarantine` table a stage publishes."""
    rows = sorted((e.path, -1 if e.line is None else e.line, e.problem) for e in errors)
    frame = pd.DataFrame(rows, columns=list(QUARANTINE_COLUMNS)).astype(
        {"file": "string", "line": "int64", "problem": "string"}
    )
    return Table("quarantine", frame, keys=("file", "line"), units={"problem": "1"})


def finite_float(token: str) -> float | None:
    """The token as a finite float, or None when it is not a number (or is NaN/inf).

    The caller decides whether None is a gap or an error to report with file and line.
    """
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def calendar_dates(years: np.ndarray, months: np.ndarray, days: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer year/month/day arrays as `datetime64[D]`, with a mask of the ones that exist.

    Month 13 or 30 February do not roll over into another date: they are marked invalid, so the
    caller can name the first bad row.
    """
    month_start = (years - 1970).astype("datetime64[Y]").astype("datetime64[M]") + (months - 1)
    dates = month_start.astype("datetime64[D]") + (days - 1)
    valid = (months >= 1) & (months <= 12) & (days >= 1)
    valid &= dates.astype("datetime64[M]") == month_start
    return dates, valid
