"""Measurements of the project itself (`make bench`, `make mutation`).

`ingest` times full-scale ingest of CAMELS-US (`camels`) and FLUXNET-CH4 (`fluxnet`) against a
pandas per-file loop and a polars floor; `evaluation` measures the evaluation harness (overhead per
query, scoring throughput, an LLM evaluation against a latency-injecting scripted server, Dask
scale-out), with `runs` starting the Prefect servers and hand-made benchmarks it needs;
`mutation` runs mutation testing per module.
"""
