"""Measurements of the project itself (`make bench`, `make mutation`).

`ingest` times full-scale ingest of CAMELS-US (`camels`) and FLUXNET-CH4 (`fluxnet`) against a
pandas per-file loop and a polars floor; `mutation` runs mutation testing per module. The
evaluation harness's figures come from `stages.bench_evaluation`.
"""
