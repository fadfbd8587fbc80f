from pathlib import Path

import pandas as pd
import pytest

from benchmarks.fluxnet import RUNNERS, prepare, text_megabytes

ROWS = 365 * 48 + 212 * 48 + 365 * 24  # US-FCN, NL-Vlu (212 days) half-hourly; BR-Vus hourly (seed 42)


@pytest.fixture(scope="module")
def raw(tmp_path_factory) -> Path:
    return prepare(tmp_path_factory.mktemp("bench"), n_sites=3, first_year=2018, last_year=2018)


def test_every_runner_writes_every_half_hourly_row(raw: Path, tmp_path: Path):
    rows = {name: runner(raw, tmp_path / name) for name, runner in RUNNERS.items()}
    assert rows == dict.fromkeys(("scibench", "pandas_loop", "polars_floor"), ROWS)
    pandas_frame = pd.read_parquet(tmp_path / "pandas_loop" / "halfhourly.parquet")
    assert sorted(pandas_frame["site_id"].unique()) == ["BR-Vus", "NL-Vlu", "US-FCN"]
    ours = pd.read_parquet(tmp_path / "scibench" / "halfhourly.parquet")
    assert ours["fch4_nmol_m2_s"].notna().sum() == pandas_frame["FCH4"].notna().sum()


def test_text_megabytes_counts_only_the_half_hourly_files(raw: Path):
    hh = sum(p.stat().st_size for p in raw.rglob("*_HH_*.csv"))
    assert text_megabytes(raw) == round(hh / 1e6, 1) and hh < sum(p.stat().st_size for p in raw.rglob("*.csv"))
