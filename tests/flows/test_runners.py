"""The flows' task runner: threads or processes of this machine, the workers of a Dask cluster when params name one."""

from __future__ import annotations

from prefect.task_runners import ProcessPoolTaskRunner, ThreadPoolTaskRunner
from prefect_dask import DaskTaskRunner

from flows.runners import task_runner


def test_without_a_scheduler_the_tasks_run_on_threads():
    assert isinstance(task_runner(None, 3), ThreadPoolTaskRunner)


def test_without_a_scheduler_tasks_that_compute_run_on_that_many_processes():
    runner = task_runner(None, 3, processes=True)
    assert isinstance(runner, ProcessPoolTaskRunner)
    assert runner._max_workers == 3


def test_a_scheduler_address_sends_the_tasks_to_that_cluster():
    for processes in (False, True):
        runner = task_runner("tcp://scheduler.example:8786", 3, processes)
        assert isinstance(runner, DaskTaskRunner)
        assert runner.address == "tcp://scheduler.example:8786"  # an existing cluster, never a local one
