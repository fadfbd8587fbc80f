"""Specification of stages/sandbox/process.py: signalling processes and finding their children.

`signal_quietly` sends a signal, and ignores a process that is gone, no pid, or one it may not
signal; `kill_group` kills a whole session (a group that is gone is no error); `children_of` lists
a process's direct children in order, read from the parent field of /proc/<pid>/stat.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from pytest import MonkeyPatch
from sandbox.process_runs import DEADLINE, start

from stages.sandbox import process
from stages.sandbox.process import kill_group, signal_quietly


def test_signal_quietly_sends_the_signal() -> None:
    child = subprocess.Popen(["sleep", "60"])
    signal_quietly(child.pid, signal.SIGTERM)
    assert child.wait(timeout=DEADLINE) == -signal.SIGTERM


def test_signal_quietly_ignores_a_process_that_is_gone_and_no_pid() -> None:
    child = subprocess.Popen(["true"])
    child.wait(timeout=DEADLINE)
    signal_quietly(child.pid, signal.SIGKILL)
    signal_quietly(None, signal.SIGKILL)


def test_kill_group_kills_the_whole_session() -> None:
    run = start("sleep 60 & echo $!; exec sleep 60")
    grandchild = int(run.proc.stdout.readline())  # type: ignore[union-attr]
    kill_group(run.proc)
    assert run.proc.wait(timeout=DEADLINE) == -signal.SIGKILL
    for _ in range(2000):  # the grandchild is reparented; wait until it is reaped or a zombie
        try:
            state = open(f"/proc/{grandchild}/stat").read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            break
        if state == "Z":
            break
        time.sleep(0.01)
    else:
        pytest.fail("the grandchild outlived its group's SIGKILL")
    os.close(run.report_r)
    kill_group(run.proc)  # a group that is gone is no error


def test_signalling_a_process_it_may_not_signal_is_no_error(monkeypatch: MonkeyPatch) -> None:
    def refuse(*args: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "kill", refuse)
    monkeypatch.setattr(os, "killpg", refuse)
    signal_quietly(1, signal.SIGKILL)
    kill_group(SimpleNamespace(pid=1))  # type: ignore[arg-type]


def test_children_of_lists_the_direct_children_in_order() -> None:
    parent = start("sleep 60 & echo $!; sleep 60 & echo $!; wait")
    try:
        children = [int(parent.proc.stdout.readline()) for _ in range(2)]  # type: ignore[union-attr]
        assert process.children_of(parent.proc.pid) == sorted(children)
        assert process.children_of(children[0]) == []
    finally:
        kill_group(parent.proc)
        parent.proc.wait(timeout=DEADLINE)
        os.close(parent.report_r)


def test_children_of_reads_the_parent_field_and_skips_what_it_cannot_read(
    tmp_path: Path, monkeypatch: MonkeyPatch
) -> None:
    # /proc/<pid>/stat is "pid (comm) state ppid pgrp ...", and comm may hold ") " itself.
    stats = {
        "10": "10 (sh) S 7 10 10 0",
        "11": "11 (a) S 1 2 (b) S 7 11 11 0",  # a name made to look like other fields
        "12": "12 (sleep) S 8 7 7 0",  # its process group is 7, its parent is not
        "13": "13 (gone",  # cut short: no closing parenthesis
        "14": "14 (odd) S seven 7 7 0",
        "15": "15 (x)",
    }
    for pid, text in stats.items():
        (tmp_path / pid).mkdir()
        (tmp_path / pid / "stat").write_text(text + "\n")
    (tmp_path / "16" / "stat").mkdir(parents=True)  # unreadable as a file, as a process that just ended
    (tmp_path / "self").mkdir()
    monkeypatch.setattr(process, "Path", lambda path: tmp_path if path == "/proc" else Path(path))
    assert process.children_of(7) == [10, 11]
    assert process.children_of(8) == [12]


def test_a_process_with_no_children_or_no_process_has_none() -> None:
    assert process.children_of(2 ** 22 + 1) == []  # above the kernel's largest pid
