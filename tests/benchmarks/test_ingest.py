import json
import sys
from pathlib import Path

from benchmarks.ingest import PATHS, main


def test_bench_runs_every_path_on_the_same_rows_and_writes_the_ratios(tmp_path: Path, monkeypatch):
    out = tmp_path / "bench.json"
    monkeypatch.setattr(sys, "argv", ["bench", "--basins", "3", "--years", "2000", "2000",
                                      "--only", "camels_us", "--repeat", "1", "--out", str(out)])
    main()
    written = json.loads(out.read_text())
    assert list(written) == ["camels_us"]
    results = written["camels_us"]
    assert (results["n_basins"], results["first_year"], results["last_year"]) == (3, 2000, 2000)
    assert {results[name]["rows"] for name in PATHS} == {3 * 366}
    assert results["speedup_vs_pandas_loop"] == round(
        results["pandas_loop"]["seconds"] / results["scibench"]["seconds"], 2)
    assert results["ratio_to_polars_floor"] == round(
        results["scibench"]["seconds"] / results["polars_floor"]["seconds"], 2)
    assert all(results[name]["peak_rss_mb"] > 0 for name in PATHS)
