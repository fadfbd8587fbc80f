"""Run one attack through the real query path and judge it against its exact expected outcome."""

from __future__ import annotations

import json
import os
import resource
import sys
import threading
from dataclasses import dataclass, replace
from pathlib import Path

from benchmarks.reliability.catalog import Attack
from benchmarks.reliability.range import AttackRange
from stages.catalog import AnswerSpec
from stages.evaluation.journal import Journal, JournalRecord
from stages.evaluation.program import AgentProgram, Attempt
from stages.evaluation.runner import run_query
from stages.sandbox import SandboxLimits
from stages.scoring.query.outcomes import Execution, classify

ATTACKS_DIR = Path(__file__).parent / "attacks"
PROMPT = "Report the Nash-Sutcliffe efficiency of your model as metric `nse`.\n"
SPEC = AnswerSpec.model_validate({"metrics": [{"name": "nse", "description": "NSE", "target": "> 0.3"}]})
# 2 GiB for the run, 4 GiB of address space for each of its processes
BASE_LIMITS = replace(SandboxLimits(wall_seconds=60, cpu_seconds=60, memory_gb=2).to_limits(),
                      address_space_bytes=4 << 30)
HARNESS_GROWTH_BYTES = 64 << 20  # what one run may add to the harness's peak memory


@dataclass(frozen=True)
class Verdict:
    """How one attack went: the fields that differed from the expected outcome, by kind."""

    attack: str
    kind: str
    mismatches: dict[str, tuple[object, object]]  # field -> (expected, got)
    breaches: list[str]  # what the attack achieved against the host (AttackRange.breaches)
    harness_failures: list[str]  # the harness raised, grew, or its next run was not clean

    @property
    def held(self) -> bool:
        """Whether the sandbox and the harness did exactly what they should."""
        return not (self.mismatches or self.breaches or self.harness_failures)


def expected(attack: Attack, privileged: bool) -> dict:
    """The exact outcome for this harness user (root: totals held by a cgroup)."""
    return attack.expect if privileged else {**attack.expect, **attack.expect_unprivileged}


def run_attack(attack: Attack, where: AttackRange, journal: Path) -> Verdict:
    """Run `attack` on `where`, then a benign program; compare both with what must happen."""
    limits = replace(BASE_LIMITS, **attack.limits)
    argv = [sys.executable, f"/agent/{attack.program}.py", json.dumps(where.secrets()), *attack.args]
    program = AgentProgram(argv=argv, agent_dir=ATTACKS_DIR)
    hidden = [where.root]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10
    failures: list[str] = []
    victim = _start_victim(where, hidden) if attack.name == "other_query_workspace" else None
    try:
        attempt = run_query(PROMPT, where.public, program, limits, hidden)
    except Exception as error:  # noqa: BLE001 - a harness failure is what is measured here
        return Verdict(attack.name, attack.kind, {}, where.breaches(),
                       [f"run_query raised {type(error).__name__}: {error}"])
    finally:
        if victim is not None:
            victim.join()
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10) - peak
    if grown > HARNESS_GROWTH_BYTES:
        failures.append(f"the harness's peak memory grew by {grown >> 20} MiB")
    got = observe(attempt, journal)
    want = expected(attack, os.geteuid() == 0)
    mismatches = {key: (value, got.get(key)) for key, value in want.items() if got.get(key) != value}
    benign = run_query(PROMPT, where.public, AgentProgram(
        argv=[sys.executable, "/agent/benign.py"], agent_dir=ATTACKS_DIR), BASE_LIMITS, hidden)
    if (benign.exit_code, benign.answer_text, benign.limits_hit) != (0, '{"metrics": {"ok": 1}}', ()):
        failures.append(f"the next run was not clean: {benign}")
    return Verdict(attack.name, attack.kind, mismatches, where.breaches(), failures)


def observe(attempt: Attempt, journal: Path) -> dict:
    """The comparable facts of one attempt: its fields, its report, its outcome, its journal line."""
    report = None
    for line in reversed(attempt.stdout.splitlines()):
        if line.startswith("REPORT "):
            report = json.loads(line[len("REPORT "):])
            break
    execution = Execution(attempt.exit_code, attempt.timed_out, attempt.infra_error,
                          attempt.answer_text, attempt.answer_problem)
    record = JournalRecord(
        key="k", query_id="q", task_id="t", agent="attacker", agent_hash="a", benchmark_id="b",
        exit_code=attempt.exit_code, timed_out=attempt.timed_out, infra_error=attempt.infra_error,
        answer_text=attempt.answer_text, answer_problem=attempt.answer_problem, attempts=1,
        wall_seconds=attempt.wall_seconds, limits_hit=list(attempt.limits_hit),
        stdout=attempt.stdout, stderr=attempt.stderr)
    store = Journal(journal)
    store.append(record)
    reloaded = Journal(journal)
    round_trip = reloaded.records()[-1] == record and not reloaded.problems
    return {"report": report, "exit_code": attempt.exit_code, "timed_out": attempt.timed_out,
            "infra_error": attempt.infra_error, "answer_text": attempt.answer_text,
            "answer_problem": attempt.answer_problem, "limits_hit": attempt.limits_hit,
            "stdout": attempt.stdout, "outcome": classify(SPEC, execution)[0].value,
            "journal_round_trip": round_trip}


def _start_victim(where: AttackRange, hidden: list[Path]) -> threading.Thread:
    """Another query running beside the attack, with a secret in its own work/."""
    code = "open('work/victim-secret', 'w').write('gold'); import time; time.sleep(4)"
    program = AgentProgram(argv=[sys.executable, "-c", code])
    thread = threading.Thread(target=run_query, args=(PROMPT, where.public, program, BASE_LIMITS, hidden))
    thread.start()
    return thread
