"""Measurements of the project itself (`make bench`, `make reliability`, `make mutation`): tooling, not product.

`ingest` times full-scale ingest of CAMELS-US (`camels`) and FLUXNET-CH4 (`fluxnet`) against a
pandas per-file loop and a polars floor; `evaluation` measures the evaluation harness (overhead per
query, scoring throughput, an LLM evaluation against a latency-injecting scripted server, Dask
scale-out), with `runs` starting the Prefect servers and hand-made benchmarks it needs;
`construction` the annotators through the harness against bare runs, and the construction's Dask
scale-out; `generation` the full SDA-style build; `build` a whole `dvc repro` stage by stage;
`reliability` runs the attack catalog against the sandbox; `mutation` runs mutation testing per module.

These modules drive the flows (`python -m flows.<name>` in subprocesses, `importlib` on Dask workers)
from outside them, so they live beside `stages/` and `flows/`, never inside: `stages/` imports
neither (tests/test_import_contracts.py).
"""
