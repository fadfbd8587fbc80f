"""The flows' task runner: threads by default, the workers of a Dask cluster when params name one."""

from __future__ import annotations

from prefect.task_runners import ThreadPoolTaskRunner
from prefect_dask import DaskTaskRunner

from flows.runners import task_runner


def test_without_a_scheduler_the_tasks_run_on_threads():
    assert isinstance(task_runner(None, 3), ThreadPoolTaskRunner)


def test_a_scheduler_address_sends_the_tasks_to_that_cluster():
    runner = task_runner("tcp://scheduler.example:8786", 3)
    assert isinstance(runner, DaskTaskRunner)
    assert runner.address == "tcp://scheduler.example:8786"  # an existing cluster, never a local one
