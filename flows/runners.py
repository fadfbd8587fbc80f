"""Where the flows' per-item Prefect tasks run: threads or processes of this machine, or a Dask cluster.

`evaluate`, `construct` and `generate` fan their per-item work out as Prefect tasks (a query run,
an annotator's label and verification, a scenario); params name a bounded pool for it, or the
scheduler of a Dask cluster (`<section>.dask_address`, prefect-dask's `DaskTaskRunner`). Tasks
that wait on sandboxes (a query run, a label) share this process on threads; tasks that compute in
Python (a scenario's numerics hold the GIL) run on worker processes, started with `spawn`, each
importing the project afresh, their arguments and results pickled. The kernel kills a worker when
this process dies (PR_SET_PDEATHSIG; it is tied to the thread that started the worker, and
Prefect's runner starts workers from its resolver threads, which it stops only after the workers).
On a cluster the flow process still does the work that is not per item (aligning, journaling,
writing) and gathers each task's small result; the workers need the project installed and the
paths the tasks are given (absolute, under the project root) on shared storage.
"""

from __future__ import annotations

import os
import signal

from prefect.task_runners import ProcessPoolTaskRunner, TaskRunner, ThreadPoolTaskRunner

from stages.sandbox import debris


def task_runner(dask_address: str | None, max_workers: int, processes: bool = False) -> TaskRunner:
    """The workers of the Dask cluster at `dask_address`; without one, `max_workers` threads or processes."""
    if dask_address:
        from prefect_dask import DaskTaskRunner  # only when a cluster is configured

        return DaskTaskRunner(address=dask_address)
    if processes:
        return ProcessPoolTaskRunner(max_workers=max_workers, initializer=debris.die_with_parent,
                                     initargs=(signal.SIGKILL, os.getpid()))
    return ThreadPoolTaskRunner(max_workers=max_workers)
