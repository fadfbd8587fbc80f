"""Column names the repositories derive from data labels: snake case plus a unit suffix.

The repository convention is ``<quantity>_<unit>`` in snake case (``prcp_mm_d``, ``relief_mean_m``),
with no suffix for dimensionless values (``ndvi``). Units arrive in UDUNITS/CF spelling (``mm d-1``,
``kg m-2 s-1``, ``degC``): a trailing ``-1`` exponent is dropped, other exponents are kept without
the sign (``m-2`` -> ``m2``), and Celsius/Kelvin are ``c``/``k``.
"""

from __future__ import annotations

import re

UNIT_WORDS = {"degc": "c", "deg_c": "c", "degrees_c": "c", "celsius": "c", "k": "k", "1": ""}


def snake_case(text: str) -> str:
    """Lower case, runs of other characters as one underscore (``NDVI 250m`` -> ``ndvi_250m``)."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def unit_suffix(unit: str | None) -> str:
    """The column suffix of a unit: ``mm d-1`` -> ``_mm_d``, ``degC`` -> ``_c``, ``1`` or None -> ``""``."""
    words = []
    for word in (unit or "").lower().split():
        word = UNIT_WORDS.get(word, word)
        word = re.sub(r"-1$", "", word)
        word = re.sub(r"-(\d+)$", r"\1", word)
        words.append(re.sub(r"[^a-z0-9]", "", word))
    suffix = "_".join(word for word in words if word)
    return f"_{suffix}" if suffix else ""


def column_name(quantity: str, unit: str | None) -> str:
    """``<quantity>`` in snake case with the unit's suffix."""
    return f"{snake_case(quantity)}{unit_suffix(unit)}"
