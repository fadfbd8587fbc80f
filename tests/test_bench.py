import json
import sys
from pathlib import Path

from stages.bench import PATHS, bench, main


def test_every_path_reads_the_same_rows_and_ratios_follow_the_timings(tmp_path: Path):
    results = bench(n_basins=3, first_year=2000, last_year=2000, work=tmp_path)["camels_us"]
    assert {results[name]["rows"] for name in PATHS} == {3 * 366}
    assert results["speedup_vs_pandas_loop"] == round(
        results["pandas_loop"]["seconds"] / results["scibench"]["seconds"], 2)
    assert results["ratio_to_polars_floor"] == round(
        results["scibench"]["seconds"] / results["polars_floor"]["seconds"], 2)
    assert all(results[name]["peak_rss_mb"] > 0 for name in PATHS)


def test_main_writes_bench_json(tmp_path: Path, monkeypatch):
    out = tmp_path / "bench.json"
    monkeypatch.setattr(sys, "argv", ["bench", "--basins", "2", "--years", "2001", "2001",
                                      "--out", str(out)])
    main()
    assert json.loads(out.read_text())["camels_us"]["basins"] == 2
