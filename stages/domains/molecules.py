"""The `molecules` repository: one entity per molecule record, with descriptors and properties.

Tables (key `molecule_id`, a 16-hex content hash made by `stages.sources.molecules`):
- `entities`: the source's `molecules` columns (file, record, name, canonical SMILES, InChIKey,
  `duplicate_of`, RDKit descriptors) plus every numeric SDF property pivoted wide. A tag is
  numeric when every one of its non-empty values is a number; its column is the snake_case tag
  with the unit's suffix when the source declared one (``LOGS`` in log10(mol/L) ->
  ``logs_log10_mol_l``), else the bare snake_case tag with unit "unspecified". Molecules without
  the tag get null.
- `properties`: every data item in long form (text and numeric), so categorical items such as a
  solubility class stay available.
- `fingerprints`: Morgan radius-2, 2048-bit on-bits (`molecule_id`, `bit`).

Every source in `inputs` must be a molecules-kind source (tables `molecules`, `properties`,
`fingerprints`); their rows are concatenated.
"""

from __future__ import annotations

import re

import pandas as pd

from stages.tables import Table

ENTITY_KEY = "molecule_id"
UNSPECIFIED = "unspecified"


def align(inputs: dict[str, dict]) -> list[Table]:
    """Build `entities`, `properties` and `fingerprints` from the molecules sources."""
    sources = [inputs[name] for name in sorted(inputs)]
    units: dict[str, str] = {}
    for source in sources:
        for column, entry in source.manifest["tables"]["molecules"]["columns"].items():
            units[column] = entry["unit"]
    molecules = _concat([s["molecules"] for s in sources], [ENTITY_KEY])
    properties = _concat([s["properties"] for s in sources], [ENTITY_KEY, "tag"])
    fingerprints = _concat([s["fingerprints"] for s in sources], [ENTITY_KEY, "bit"])
    wide, wide_units = pivot_numeric(properties, reserved=set(molecules.columns))
    entities = molecules.merge(wide, on=ENTITY_KEY, how="left", validate="one_to_one")
    entity_units = {c: units[c] for c in molecules.columns if units.get(c, "key") != "key"}
    property_units = {c: u for source in sources for c, e in
                      source.manifest["tables"]["properties"]["columns"].items()
                      if (u := e["unit"]) != "key"}
    return [
        Table("entities", entities, keys=(ENTITY_KEY,), units=entity_units | wide_units),
        Table("properties", properties, keys=(ENTITY_KEY, "tag"), units=property_units),
        Table("fingerprints", fingerprints, keys=(ENTITY_KEY, "bit"), units={}),
    ]


def pivot_numeric(properties: pd.DataFrame, reserved: set[str]) -> tuple[pd.DataFrame, dict[str, str]]:
    """One float64 column per numeric tag (indexed by molecule_id) and the columns' units.

    Raises ValueError when a tag's column name clashes with a reserved column or another tag's,
    or when one tag carries two different units.
    """
    present = properties[properties["value_text"].notna()]
    numeric = present.groupby("tag", sort=True)["value_num"].apply(lambda v: bool(v.notna().all()))
    columns, units = {}, {}
    for tag in numeric[numeric].index:
        declared = sorted(set(present.loc[present["tag"] == tag, "unit"].dropna()))
        if len(declared) > 1:
            raise ValueError(f"property <{tag}> has more than one unit: {declared}")
        unit = declared[0] if declared else UNSPECIFIED
        name = snake_case(tag) + (f"_{snake_case(unit)}" if declared and unit != "1" else "")
        if name in reserved or name in columns.values():
            other = next((t for t, c in columns.items() if c == name), "a molecules column")
            raise ValueError(f"property <{tag}> would become column {name!r}, as does {other}")
        columns[tag], units[name] = name, unit
    chosen = present[present["tag"].isin(list(columns))]
    wide = chosen.pivot(index=ENTITY_KEY, columns="tag", values="value_num").rename(columns=columns)
    wide = wide.reindex(columns=sorted(units)).astype("float64").reset_index()
    wide[ENTITY_KEY] = wide[ENTITY_KEY].astype("string")
    return wide.rename_axis(columns=None), units


def snake_case(text: str) -> str:
    """`SOL_classification` -> `sol_classification`, `MODEL.CCRATIO` -> `model_ccratio`."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1_\2", text)
    name = re.sub(r"[^a-z0-9]+", "_", spaced.lower()).strip("_")
    return name if name[:1].isalpha() else f"prop_{name}".rstrip("_")


def _concat(frames: list[pd.DataFrame], keys: list[str]) -> pd.DataFrame:
    joined = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return joined.sort_values(keys, kind="stable", ignore_index=True)
