"""Fuzz runs: count what ran and what failed per target; write the report `make fuzz` asks for.

`SCIBENCH_FUZZ_REPORT=<path>` writes `{"profile", "cases", "crashes", "seconds", "targets": {target:
{"cases", "crashes", "seconds"}}}` at the end of the session: cases are the examples the fuzz tests
actually ran (counted by `scibench_testing.fuzzing.counted`), crashes the contract violations
hypothesis reported (one per distinct minimal failing input).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from scibench_testing.fuzzing import CASES, PROFILE, TARGETS

CRASHES: Counter[str] = Counter()
SECONDS: Counter[str] = Counter()


def _target(name: str) -> str:
    return name.split("[")[0].removeprefix("test_")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    target = _target(item.name)
    if report.when != "call" or target not in TARGETS:
        return
    SECONDS[target] += report.duration
    if report.failed and call.excinfo is not None:
        error = call.excinfo.value
        CRASHES[target] += len(error.exceptions) if isinstance(error, BaseExceptionGroup) else 1


def pytest_sessionfinish(session, exitstatus):
    out = os.environ.get("SCIBENCH_FUZZ_REPORT")
    if not out:
        return
    ran = [t for t in TARGETS if CASES[t]]
    report = {
        "profile": PROFILE,
        "cases": sum(CASES[t] for t in ran),
        "crashes": sum(CRASHES[t] for t in ran),
        "seconds": round(sum(SECONDS[t] for t in ran), 1),
        "targets": {t: {"cases": CASES[t], "crashes": CRASHES[t], "seconds": round(SECONDS[t], 1)} for t in ran},
    }
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(report, indent=2) + "\n")
