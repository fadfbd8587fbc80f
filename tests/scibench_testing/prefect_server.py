"""A local Prefect server for tests, started so that no other process can take its port.

It lives in stages/bench/runs.py (the evaluation bench starts one too); a server that does not
come up raises RuntimeError with its log, which fails the test.
"""

from stages.bench.runs import PrefectServer, free_port, healthy, listening_pids, start_prefect_server

__all__ = ["PrefectServer", "free_port", "healthy", "listening_pids", "start_prefect_server"]
