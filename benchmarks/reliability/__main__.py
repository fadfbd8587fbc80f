"""`python -m benchmarks.reliability`: run every attack and write processed/metrics/reliability.json.

The report counts attacks tried, escapes, leaks and harness failures (all 0 is the goal), lists the
attacks that did not hold, measures the sandbox's start overhead (median wall time of `/bin/true`
in the sandbox against a bare `/bin/true`), and takes in the figures other checks wrote beside it:
mutation testing (`make mutation`), fuzzing (`make fuzz`) and crash safety.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.reliability.catalog import ATTACKS
from benchmarks.reliability.range import AttackRange
from benchmarks.reliability.run import BASE_LIMITS, run_attack
from stages.hashing import write_json
from stages.layout import METRICS
from stages.sandbox import run_sandboxed
from stages.sandbox.command import sandbox_identity

SHARED = Path(__file__).resolve().parents[3] / "shared"
SIBLINGS = ("mutation", "fuzz", "crash_safety")


def start_overhead(runs: int) -> dict:
    """Median wall seconds of `/bin/true` in the sandbox and bare, over `runs` runs each."""
    with tempfile.TemporaryDirectory() as folder:
        ws = Path(folder)
        (ws / "data").mkdir()
        (ws / "work").mkdir()
        (ws / "prompt.md").write_text("-\n")
        sandboxed, bare = [], []
        for _ in range(runs):
            start = time.monotonic()
            run_sandboxed(ws, ["/bin/true"], limits=BASE_LIMITS)
            sandboxed.append(time.monotonic() - start)
            start = time.monotonic()
            subprocess.run(["/bin/true"], check=True)
            bare.append(time.monotonic() - start)
    return {"runs": runs, "sandboxed_median_s": round(statistics.median(sandboxed), 4),
            "bare_median_s": round(statistics.median(bare), 4),
            "overhead_median_s": round(statistics.median(sandboxed) - statistics.median(bare), 4)}


def main() -> None:
    """Run the attacks and write the report."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--overhead-runs", type=int, default=30)
    args = parser.parse_args()
    verdicts = []
    with AttackRange(SHARED) as where, tempfile.TemporaryDirectory() as scratch:
        for attack in ATTACKS:
            verdict = run_attack(attack, where, Path(scratch) / "journal.jsonl")
            verdicts.append(verdict)
            print(f"{attack.name:32s} {'held' if verdict.held else 'DID NOT HOLD'}", flush=True)
    failed = [v for v in verdicts if not v.held]
    identity = sandbox_identity()
    report = {
        "harness_uid": os.geteuid(),
        "sandbox_uid": identity.uid,
        "attacks_tried": len(verdicts),
        "escapes": sum(v.kind == "escape" and bool(v.mismatches) for v in verdicts)
        + sum(bool(v.breaches) for v in verdicts),
        "leaks": sum(v.kind == "leak" and bool(v.mismatches) for v in verdicts),
        "harness_failures": sum(v.kind == "harness" and bool(v.mismatches) for v in verdicts)
        + sum(bool(v.harness_failures) for v in verdicts),
        "did_not_hold": {v.attack: {"kind": v.kind, "mismatches": {k: list(map(repr, pair))
                                                                   for k, pair in v.mismatches.items()},
                                    "breaches": v.breaches, "harness": v.harness_failures}
                         for v in failed},
        "start_overhead": start_overhead(args.overhead_runs),
        "python": sys.version.split()[0],
    }
    for name in SIBLINGS:
        path = METRICS / f"{name}.json"
        if path.exists():
            report[name] = json.loads(path.read_text())
    write_json(METRICS / "reliability.json", report)
    print(f"reliability: {report['attacks_tried']} attacks, {report['escapes']} escapes, "
          f"{report['leaks']} leaks, {report['harness_failures']} harness failures; start overhead "
          f"{report['start_overhead']['overhead_median_s']} s (median)")


if __name__ == "__main__":
    main()
