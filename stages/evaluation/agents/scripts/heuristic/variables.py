"""Resolve the quantities a prompt names in words to columns and per-entity values.

A phrase such as "the aridity index" or "mean daily precipitation" is matched to a column by the
words of the column's name, expanded with the usual abbreviations of data tables (`prcp` is
precipitation, `q`/`qobs` streamflow, `pet` potential evapotranspiration, ...); unit suffixes
(`_mm_d`, `_c`, `_km2`) are not words of the name. A phrase the prompt defines (`runoff ratio =
mean daily observed streamflow / mean daily precipitation`) is resolved through its definition:
a ratio, difference or product of per-entity means of time-series columns, the means taken over
the days on which every column involved is known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from heuristic.profile import Profile

ABBREVIATIONS = {
    "prcp": "precipitation rain", "precip": "precipitation", "ppt": "precipitation", "p": "precipitation",
    "q": "streamflow discharge flow runoff", "qobs": "observed streamflow discharge flow runoff",
    "tmax": "maximum temperature", "tmin": "minimum temperature", "tmean": "mean temperature",
    "tavg": "mean temperature", "t": "temperature", "srad": "solar radiation shortwave",
    "vp": "vapour vapor pressure", "dayl": "day length daylight", "swe": "snow water equivalent",
    "pet": "potential evapotranspiration", "et": "evapotranspiration", "elev": "elevation",
    "lat": "latitude", "lon": "longitude", "frac": "fraction share", "fch4": "methane flux",
    "ndvi": "vegetation index greenness", "gpp": "gross primary production", "ta": "air temperature",
    "ws": "wind speed", "relief": "elevation terrain height",
    "tair": "air temperature", "mol": "molecular", "wt": "weight", "logs": "log solubility",
    "tpsa": "topological polar surface area", "csp3": "sp3 carbon saturation",
    "wtd": "water table depth", "ts": "soil temperature", "le": "latent heat",
}
UNITS = {"mm", "d", "c", "m", "km", "km2", "deg", "pa", "s", "w", "m2", "yr", "kg", "ha", "t",
         "nmol", "umol", "mol", "degc", "pct", "percent"}
WORD = re.compile(r"[a-z][a-z0-9]*")
STOP = {"the", "of", "a", "an", "daily", "mean", "average", "per", "and", "in", "on", "each", "over",
        "its", "their", "basin", "entity", "scope", "s"}
OPERATORS = {"/": np.divide, "-": np.subtract, "*": np.multiply}


@dataclass(frozen=True)
class Variable:
    """A per-entity quantity: its values indexed by entity, and how it was resolved."""

    values: pd.Series
    how: str


def name_words(column: str) -> set[str]:
    """Words of a column name with abbreviations expanded and unit tokens dropped."""
    tokens = column.lower().split("_")
    while len(tokens) > 1 and tokens[-1] in UNITS:
        tokens.pop()
    words = set(tokens)
    for token in tokens:
        words |= set(ABBREVIATIONS.get(token, "").split())
    return words


def phrase_words(phrase: str) -> set[str]:
    """Content words of a phrase."""
    return {w for w in WORD.findall(phrase.lower()) if w not in STOP}


def match_column(phrase: str, columns: list[str]) -> str | None:
    """The column whose name words cover the phrase best (a backticked name wins outright)."""
    quoted = [c for c in re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", phrase) if c in columns]
    if quoted:
        return quoted[0]
    words = phrase_words(phrase)
    scored = [(len(words & name_words(c)) - 0.01 * len(name_words(c) - words), c) for c in columns]
    best = max(scored, default=(0, None), key=lambda item: item[0])
    return best[1] if best[0] > 0.5 else None


def definition(text: str, phrase: str) -> str | None:
    """The right-hand side of `<phrase> = <expression>` in the prompt, if it defines the phrase."""
    words = r"\s+".join(re.escape(w) for w in phrase.split())
    match = re.search(rf"{words}\s*=\s*([^,;:\n]+(?:\n[^,;:\n]+)?)", text, re.IGNORECASE)
    return " ".join(match.group(1).split()).rstrip(".") if match else None


def series_mean(profile: Profile, columns: list[str]) -> pd.DataFrame:
    """Per-entity means of time-series columns over the days on which all of them are known."""
    rows = profile.series.dropna(subset=columns)
    return rows.groupby(profile.key)[columns].mean()


def resolve(text: str, phrase: str, profile: Profile) -> Variable | None:
    """A per-entity quantity for a phrase: an attribute, a defined expression or a series mean."""
    attributes = profile.attributes
    drivers = [*profile.drivers, *([profile.target] if profile.target else [])]
    column = match_column(phrase, attributes)
    if column is not None:
        return Variable(profile.entities[column].astype(float), f"attribute {column}")
    expression = definition(text, phrase.strip())
    if expression is not None:
        operator = next((o for o in OPERATORS if f" {o} " in expression), None)
        parts = expression.split(f" {operator} ", 1) if operator else [expression]
        found = [match_column(part, drivers) for part in parts]
        if all(found) and profile.series is not None:
            means = series_mean(profile, list(dict.fromkeys(found)))
            values = means[found[0]] if operator is None else OPERATORS[operator](means[found[0]],
                                                                                   means[found[1]])
            return Variable(values.replace([np.inf, -np.inf], np.nan), f"{operator or ''}".join(found))
    column = match_column(phrase, drivers)
    if column is not None and profile.series is not None:
        return Variable(series_mean(profile, [column])[column], f"mean {column}")
    return None
