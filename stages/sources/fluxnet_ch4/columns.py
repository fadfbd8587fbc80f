"""FLUXNET-CH4 / AmeriFlux variable names -> snake_case output columns with a unit suffix.

A raw name is a base variable (ONEFlux / AmeriFlux FP-Standard vocabulary, e.g. `FCH4`, `SW_IN`,
`GPP_NT`) followed by qualifiers: position indices (`TS_1`, AmeriFlux `TS_1_1_1`) and processing
suffixes (`_PI`, `_F`, `_ANNOPTLM`, `_RANDUNC`, `_UNC`, `_SD`, `_N`, `_QC`). The output column is
the lower-cased name plus the unit suffix of the base variable, e.g. `FCH4_F_ANNOPTLM` ->
`fch4_f_annoptlm_nmol_m2_s`, `TS_1` -> `ts_1_c`. `_QC` columns are integer flags (unit "1", no
suffix, values in {0, 1, 2, 3}); `_N` columns are sample counts (unit "1").

Units follow the FLUXNET-CH4 / ONEFlux conventions (Delwiche et al. 2021, Table B1 and the
AmeriFlux FP-Standard): daily (DD) rows hold daily means except `P` (daily sum); sub-daily rows
hold interval means except `P` (interval sum). A name whose base is not in `BASE_UNITS` is
"unknown": the reader keeps it (lower-cased, unit "unknown") or raises, per its `Params`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BY_UNIT = {  # unit -> (column suffix, base variables)
    "nmol/m2/s": ("nmol_m2_s", "FCH4 SCH4"),
    "umol/m2/s": ("umol_m2_s", "NEE FC SC GPP GPP_NT GPP_DT RECO RECO_NT RECO_DT PPFD_IN PPFD_OUT"
                  " PPFD_DIF PPFD_BC_IN PPFD_BC_OUT"),
    "W/m2": ("w_m2", "H LE G SH SLE NETRAD SW_IN SW_OUT SW_DIF SW_BC_IN SW_BC_OUT LW_IN LW_OUT"
             " LW_BC_IN LW_BC_OUT SW_IN_POT"),
    "m/s": ("m_s", "USTAR WS WS_MAX U_SIGMA V_SIGMA W_SIGMA"),
    "deg": ("deg", "WD WD_SIGMA"),
    "degC": ("c", "TA TS T_SONIC T_SONIC_SIGMA TW T_CANOPY TO"),
    "hPa": ("hpa", "VPD"),
    "%": ("pct", "RH SWC ALB LEAF_WET"),
    "kPa": ("kpa", "PA"),
    "mm": ("mm", "P P_RAIN P_SNOW"),
    "cm": ("cm", "D_SNOW"),
    "m": ("m", "WTD MO_LENGTH PBLH"),
    "umol/mol": ("umol_mol", "CO2 CO2_SIGMA"),
    "nmol/mol": ("nmol_mol", "CH4 CH4_SIGMA"),
    "mmol/mol": ("mmol_mol", "H2O H2O_SIGMA"),
    "kg/m/s2": ("kg_m_s2", "TAU"),
    "1": ("", "ZL"),
}
BASE_UNITS: dict[str, tuple[str, str]] = {  # base variable -> (unit, column suffix)
    base: (unit, suffix) for unit, (suffix, names) in _BY_UNIT.items() for base in names.split()
}
_BASES_LONGEST_FIRST = sorted(BASE_UNITS, key=lambda base: (-len(base), base))
_QUALIFIERS = re.compile(r"(?:_(?:\d+|PI|F|ANNOPTLM|RANDUNC|UNC|SD|N|IU|QC))*")
_RAW_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
QC_FLAGS = frozenset({0, 1, 2, 3})
UNKNOWN_UNIT = "unknown"


@dataclass(frozen=True)
class Variable:
    """How one raw column becomes an output column."""

    raw: str
    column: str
    unit: str
    is_flag: bool  # a `_QC` flag: integer in {0, 1, 2, 3}, stored as Int8
    never_missing: bool  # an ANN gap-filled column: -9999 there is an unexpected sentinel


def is_variable_name(raw: str) -> bool:
    """True for a well-formed FLUXNET/AmeriFlux column name (upper case, digits, underscores)."""
    return _RAW_NAME.fullmatch(raw) is not None


def describe(raw: str) -> Variable | None:
    """The output column of a known variable name, or None if its base variable is unknown."""
    for base in _BASES_LONGEST_FIRST:
        if raw != base and not raw.startswith(base + "_"):
            continue
        qualifiers = raw[len(base):]
        if not _QUALIFIERS.fullmatch(qualifiers):
            continue
        tokens = qualifiers.split("_")[1:]
        unit, suffix = BASE_UNITS[base]
        is_flag = tokens[-1:] == ["QC"]
        if is_flag or tokens[-1:] == ["N"]:
            unit, suffix = "1", ""
        column = "_".join([base.lower(), *(t.lower() for t in tokens), *([suffix] if suffix else [])])
        return Variable(raw, column, unit, is_flag, "ANNOPTLM" in tokens)
    return None


def describe_unknown(raw: str) -> Variable:
    """The generic rule for an unknown name: lower-cased, unit "unknown", never a flag."""
    column = re.sub(r"_+", "_", raw.lower()).strip("_")
    return Variable(raw, column, UNKNOWN_UNIT, is_flag=False, never_missing=False)
