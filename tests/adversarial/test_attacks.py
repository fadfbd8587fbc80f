"""Every attack in benchmarks/reliability/catalog.py, run as a real program through `run_query`.

Each test asserts the attack's exact expected outcome (its own report of what it managed, and the
harness's record of the run), that nothing reached the host (listeners, a bystander process of the
sandbox's uid, kernel settings, leftover processes and cgroups), that the harness did not grow or
fail, and that the next ordinary run is clean. The controls show that the attack programs are
real: run without the sandbox, the same programs find the gold and reach the host.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from benchmarks.reliability.catalog import ATTACKS
from benchmarks.reliability.range import AttackRange
from benchmarks.reliability.run import ATTACKS_DIR, BASE_LIMITS, PROMPT, expected, observe, run_attack
from stages.evaluation.program import AgentProgram
from stages.evaluation.runner import run_query

SHARED = Path(__file__).resolve().parents[3] / "shared"

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None,
                                reason="bubblewrap (bwrap) is not installed: the sandbox needs it")


@pytest.fixture(scope="module")
def attack_range():
    with AttackRange(SHARED) as where:
        yield where


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda attack: attack.name)
def test_attack_gets_exactly_its_expected_outcome(attack, attack_range, tmp_path):
    verdict = run_attack(attack, attack_range, tmp_path / "journal.jsonl")
    assert verdict.mismatches == {}
    assert verdict.breaches == []
    assert verdict.harness_failures == []


def test_every_attack_program_exists_and_each_name_is_unique():
    assert len({attack.name for attack in ATTACKS}) == len(ATTACKS) >= 25
    for attack in ATTACKS:
        assert (ATTACKS_DIR / f"{attack.program}.py").is_file(), attack.program


def test_unprivileged_expectations_only_relax_the_totals():
    relaxed = {attack.name for attack in ATTACKS if attack.expect_unprivileged}
    assert relaxed == {"fork_bomb", "memory_bomb"}
    assert expected(next(a for a in ATTACKS if a.name == "fork_bomb"), privileged=True)["limits_hit"] == ("pids",)


def run_unsandboxed(program: str, where: AttackRange, tmp_path: Path, monkeypatch) -> dict:
    monkeypatch.setattr("stages.sandbox.bwrap_available", lambda: False)
    secrets = where.secrets() | {"walk_root": str(where.root)}  # not the whole host disk
    argv = [sys.executable, str(ATTACKS_DIR / f"{program}.py"), json.dumps(secrets)]
    attempt = run_query(PROMPT, where.public, AgentProgram(argv=argv), BASE_LIMITS, [],
                        unsafe_no_sandbox=True)
    return observe(attempt, tmp_path / "journal.jsonl")["report"]


def test_control_read_gold_finds_the_gold_without_the_sandbox(attack_range, tmp_path, monkeypatch):
    report = run_unsandboxed("read_gold", attack_range, tmp_path, monkeypatch)
    assert str(attack_range.gold) in report["readable"]
    assert str(attack_range.gold) in report["found"]
    assert attack_range.decoy_script.as_posix() in report["found"]


def test_control_network_reaches_the_host_without_the_sandbox(attack_range, tmp_path, monkeypatch):
    report = run_unsandboxed("network", attack_range, tmp_path, monkeypatch)
    assert {"tcp", "abstract", "unix_path"} <= set(report["reached"])
    breaches = attack_range.breaches()
    assert "a connection reached the host's tcp listener" in breaches
    assert "a connection reached the host's udp listener" in breaches


@pytest.mark.skipif(os.geteuid() != 0, reason="reading a root-only file needs the harness to be root")
def test_control_root_files_are_readable_by_root_without_the_sandbox(attack_range, tmp_path, monkeypatch):
    report = run_unsandboxed("root_files", attack_range, tmp_path, monkeypatch)
    assert str(attack_range.root_secret) in report["readable"]
