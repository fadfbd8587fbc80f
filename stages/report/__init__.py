"""The report people look at: `processed/reports/index.html` with its plots, and a terminal summary.

`python -m stages.report` (DVC stage `report`) reads every evaluated agent's metrics, the comparison
with the baseline and the validity report, and writes a static page (no script, nothing fetched)
with plots in `processed/reports/plots/` as PNG and SVG. `python -m stages.report --summary` prints
the short table `make run` ends with. Modules: `inputs` (what is read), `tables`, `catalog_tables`
and `generated_tables` (the tables as values), `contents` (all of them in page order), `plots` and
`figures` (matplotlib), `html` (the page), `build` (all of it), `summary` (the terminal), `prefect`
(the tables as Prefect artifacts).
"""
