"""Where the flows' per-item Prefect tasks run: threads of this process, or an existing Dask cluster.

`evaluate`, `construct` and `generate` fan their per-item work out as Prefect tasks (a query run,
an annotator's label and verification, a scenario); params name a bounded thread pool for it, or
the scheduler of a Dask cluster (`<section>.dask_address`, prefect-dask's `DaskTaskRunner`). On a
cluster the flow process still does the work that is not per item (aligning, journaling, writing)
and gathers each task's small result; the workers need the project installed and the paths the
tasks are given (absolute, under the project root) on shared storage.
"""

from __future__ import annotations

from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner


def task_runner(dask_address: str | None, max_workers: int) -> TaskRunner:
    """The workers of the Dask cluster at `dask_address`, or `max_workers` threads when it is None."""
    if dask_address:
        from prefect_dask import DaskTaskRunner  # only when a cluster is configured

        return DaskTaskRunner(address=dask_address)
    return ThreadPoolTaskRunner(max_workers=max_workers)
