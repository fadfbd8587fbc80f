"""Synthetic HDF source: native files, determinism, water-balance closure, 10x round trips."""

from __future__ import annotations

from pathlib import Path

import netCDF4
import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError
from scibench_testing.files import folder_bytes
from scipy.stats import spearmanr
from sklearn.cluster import KMeans
from sklearn.decomposition import PCA
from sklearn.metrics import silhouette_score

from stages.repository import write_tables
from stages.sources import hdf as reader
from stages.synthesize import hdf
from stages.synthesize.hdf import Params, aggr, tenx

TINY = Params(n_lat=8, n_lon=8, n_days=30, n_features=60, n_barcodes=40)
YEAR = Params(n_lat=24, n_lon=24, n_days=365, n_features=400, n_barcodes=300)
FILES = [hdf.V2_FILE, hdf.V3_FILE, hdf.NETCDF_FILE, aggr.MATRIX_FILE]


def wide(grid: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """variable -> (time x cell) frame."""
    return {name: part.pivot(index="time", columns="cell_id", values="value")
            for name, part in grid.groupby("variable")}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tiny")
    hdf.write(root, TINY)
    return root


@pytest.fixture(scope="module")
def year(tmp_path_factory) -> dict[str, pd.DataFrame]:
    root = tmp_path_factory.mktemp("year")
    hdf.write_simulation(root / hdf.NETCDF_FILE, YEAR)
    return wide(reader.read_grid(root / hdf.NETCDF_FILE))


def test_tiny_writes_the_native_files(tiny):
    assert sorted(folder_bytes(tiny)) == sorted([*FILES, aggr.AGGREGATION_FILE])
    for name in FILES:
        assert (tiny / name).read_bytes()[:8] == b"\x89HDF\r\n\x1a\n"
    with netCDF4.Dataset(tiny / hdf.NETCDF_FILE) as nc:
        assert nc.data_model == "NETCDF4" and nc.Conventions == "CF-1.8"
        assert "history" not in nc.ncattrs() and "date_created" not in nc.ncattrs()
        assert nc["time"].units == "days since 2000-01-01 00:00:00" and nc["time"].calendar == "standard"
        assert nc["soil_water"].dimensions == ("time", "lat", "lon")
        assert nc["soil_water"]._FillValue == np.float32(-9999.0)
        assert nc["runoff"].filters()["zlib"] and nc["runoff"].chunking() == [30, 8, 8]
        assert {v: nc[v].units for v in ("precip", "tair", "swe")} == {"precip": "mm d-1", "tair": "degC",
                                                                       "swe": "mm"}


def test_same_seed_same_bytes_other_seed_differs(tmp_path, tiny):
    hdf.write(tmp_path / "again", TINY)
    assert folder_bytes(tmp_path / "again") == folder_bytes(tiny)
    hdf.write(tmp_path / "other", TINY.model_copy(update={"seed": 7}))
    other = folder_bytes(tmp_path / "other")
    assert all(other[name] != folder_bytes(tiny)[name] for name in FILES)


def test_tiny_ingests_into_valid_deterministic_tables(tmp_path, tiny):
    manifests = [write_tables(tmp_path / str(run), reader.read(tiny, reader.Params()), {"source": "hdf"})
                 for run in (1, 2)]
    assert manifests[0] == manifests[1]
    rows = {name: entry["rows"] for name, entry in manifests[0]["tables"].items()}
    assert rows["grid"] == 7 * 30 * 64 and rows["cells"] == 64 and rows["quarantine"] == 0
    aggregated, libraries = aggr.simulate(np.random.default_rng([TINY.seed, 23]), 58, 20)
    assert rows["features"] == 60 + 2 * 15 + 60 and rows["barcodes"] == 40 + 20 + len(aggregated.barcodes)
    assert rows["libraries"] == len(libraries) * 6 == 72  # sample_id, molecule_h5, donor, condition, age, sex
    assert folder_bytes(tmp_path / "1") == folder_bytes(tmp_path / "2")


def test_ocean_cells_are_null_and_land_cells_complete(tiny):
    grid = reader.read_grid(tiny / hdf.NETCDF_FILE)
    by_cell = grid.groupby("cell_id")["value"].agg(lambda v: v.isna().mean())
    assert set(by_cell.round(6)) == {0.0, 1.0}  # a cell is ocean for every variable and day, or land
    assert 0.6 < (by_cell == 0).mean() < 0.9
    cells = reader.read_grid_cells(tiny / hdf.NETCDF_FILE)
    assert cells["lat_deg"].between(25, 50).all() and cells["lon_deg"].between(-125, -67).all()


def test_water_balance_closes_in_every_land_cell(year):
    storage = year["soil_water"] + year["swe"]
    fluxes = (year["precip"] - year["aet"] - year["runoff"]).iloc[1:].sum()
    residual = (fluxes - (storage.iloc[-1] - storage.iloc[0])).dropna()
    assert len(residual) > 300 and residual.abs().max() < 1e-3  # mm, float32 storage
    assert int((year["aet"] > year["pet"] + 1e-4).sum().sum()) == 0
    assert year["soil_water"].min().min() >= 0 and year["swe"].min().min() >= 0


def test_runoff_ratio_falls_with_aridity_and_snow_lies_in_the_north(year):
    means = pd.DataFrame({name: frame.mean() for name, frame in year.items()}).dropna()
    assert spearmanr(means["pet"] / means["precip"], means["runoff"] / means["precip"]).statistic < -0.6
    assert 0.15 < (means["runoff"] / means["precip"]).median() < 0.6
    row = means.index.str.slice(3, 7).astype(int)  # lat0000_lon0000 -> row, south to north
    assert means["swe"][row >= 18].mean() > 10 * max(means["swe"][row < 6].mean(), 0.01)
    january = year["tair"].iloc[:31].mean().dropna()
    july = year["tair"].iloc[181:212].mean().dropna()
    assert len(july) > 300 and (july > january + 5).all()


def test_ten_x_files_round_trip(tiny):
    expected = tenx.simulate_v3(np.random.default_rng([TINY.seed, 21]), TINY.n_features, TINY.n_barcodes)
    matrix = reader.read_sparse_matrix(tiny / hdf.V3_FILE)
    assert matrix.layout == "v3" and matrix.barcodes.tolist() == expected.barcodes
    assert matrix.features["feature_id"].tolist() == expected.feature_ids
    assert (matrix.to_scipy() != expected.matrix).nnz == 0
    assert matrix.features["genome"].isna().sum() == 2  # antibody capture features have no genome
    assert set(matrix.features["feature_type"]) == {"Gene Expression", "Antibody Capture"}
    barnyard = reader.read_sparse_matrix(tiny / hdf.V2_FILE)
    assert barnyard.layout == "v2" and barnyard.groups == ("/hg19", "/mm10")
    assert barnyard.shape == (30, 20)
    per_genome = barnyard.counts_frame().merge(barnyard.features, on="feature_id").pivot_table(
        index="barcode", columns="genome", values="count", aggfunc="sum", fill_value=0)
    dominant = per_genome.max(axis=1) / per_genome.sum(axis=1)
    assert dominant.median() > 0.9  # each barcode is a cell of one species


def test_count_matrix_is_sparse_with_cell_type_structure():
    counts = tenx.simulate_v3(np.random.default_rng(5), 1000, 400)
    density = counts.matrix.nnz / np.prod(counts.matrix.shape)
    assert 0.02 < density < 0.25
    genes = counts.matrix.toarray()[:-2].astype(float)
    cells = PCA(10).fit_transform(np.log1p(genes / genes.sum(axis=0) * 1e4).T)
    labels = KMeans(tenx.N_CELL_TYPES, n_init=10, random_state=0).fit_predict(cells)
    assert silhouette_score(cells, labels) > 0.3  # a shuffled matrix scores below 0.1


def test_params_are_validated():
    with pytest.raises(ValidationError):
        Params(n_lat=8, n_lon=8, n_days=30, n_features=60, n_barcodes=40, unknown=1)
    with pytest.raises(ValidationError):
        Params(n_lat=1, n_lon=8, n_days=30, n_features=60, n_barcodes=40)


def test_aggregation_barcodes_name_their_library_and_the_biology_is_there(tiny):
    matrix = reader.read_sparse_matrix(tiny / aggr.MATRIX_FILE)
    table = pd.read_csv(tiny / aggr.AGGREGATION_FILE)
    assert table["sample_id"].tolist() == [f"D{d}_{c}" for d in range(1, 7) for c in ("ctrl", "stim")]
    wells = pd.Series(matrix.barcodes).str.split("-").str[1].astype(int)
    assert sorted(set(wells)) == list(range(1, 13))
    sequences = pd.Series(matrix.barcodes).str.split("-").str[0]
    assert sequences.duplicated().sum() > 0  # some 16-base sequences recur across libraries
    assert not pd.Series(matrix.barcodes).duplicated().any()

    counts, libraries = aggr.simulate(np.random.default_rng(3), 1000, 300)
    dense = counts.matrix.toarray().astype(float)
    names = counts.names
    genes = np.array([t == "Gene Expression" for t in counts.feature_types])
    total = dense[genes].sum(axis=0)
    isg = dense[[names.index(g) for g in aggr.ISGS]].sum(axis=0) / total
    mito = dense[[names.index(g) for g in aggr.MITO]].sum(axis=0) / total
    well = np.array([int(b.split("-")[1]) for b in counts.barcodes])
    for donor in range(6):  # every donor's stimulated library expresses more ISGs than its control
        assert isg[well == 2 * donor + 2].mean() > 2 * isg[well == 2 * donor + 1].mean()
    assert spearmanr(mito, np.log(total)).statistic < -0.1  # damaged cells: fewer UMIs, more mitochondria
    cd19 = dense[len(names) - 1]  # the antibody tag, not the gene of the same name
    b_share = [(cd19[(well == 2 * d + 1) | (well == 2 * d + 2)] > 80).mean() for d in range(6)]
    ages = [lib.age for lib in libraries[::2]]
    assert spearmanr(ages, b_share).statistic < -0.5
