"""`make mutation`: mutation testing of the modules whose tests must be able to fail.

Each module in `MODULE_TESTS` is mutated by mutmut and every mutant is run against only the tests
that cover that module, so a run fits two cores. mutmut 3 mutates a copy (`mutants/`) rather than
the files in place, which matters in a checkout that others edit while it runs; the copy for each
module is made in its own scratch directory (`.cache/mutation/<module>/`) holding `stages/`,
`benchmarks/` (the tests' helpers import it), `tests/` and the project's pyproject.toml with a
`[tool.mutmut]` table that names the module and its tests. The statuses mutmut reports for each mutant are counted into
processed/metrics/mutation.json, per module and in total; a run of some modules replaces their
figures and keeps the other modules' from the last run.

`killed_share` is killed / (mutants - skipped). A timed-out mutant is not counted as killed: a
test run that hangs is reported apart (`timeout`) for a person to look at.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from stages.hashing import write_json
from stages.layout import METRICS
from stages.sandbox import cgroups, command

# Each module (a file or a package directory) with the test paths that cover it.
MODULE_TESTS: dict[str, tuple[str, ...]] = {
    "stages/scoring/query": ("tests/scoring/query",),
    "stages/scoring/aggregate": ("tests/scoring/aggregate",),
    "stages/construction/scopes.py": ("tests/construction/test_scopes.py",),
    # The sandbox's unit tests without test_run_*.py, whose end-to-end runs (wall clock, CPU and
    # memory totals) take ~15 s for every mutant they cover: hours for one pass over the package.
    "stages/sandbox": ("tests/sandbox/test_init_parts.py", "tests/sandbox/test_result.py",
                       "tests/sandbox/test_init_bwrap.py",
                       "tests/sandbox/test_init_stops.py", "tests/sandbox/test_cgroups_v1.py",
                       "tests/sandbox/test_cgroups_v2.py", "tests/sandbox/test_cgroups_group.py",
                       "tests/sandbox/test_cgroups_real.py",
                       "tests/sandbox/test_command.py", "tests/sandbox/test_filesystem.py",
                       "tests/sandbox/test_process_tail_parse.py", "tests/sandbox/test_process_watch.py",
                       "tests/sandbox/test_process_signals.py", "tests/sandbox/test_seccomp.py",
                       "tests/sandbox/test_unsandboxed.py", "tests/sandbox/test_untrusted.py",
                       "tests/sandbox/test_extra_binds.py"),
    "stages/evaluation/journal.py": ("tests/evaluation/test_journal.py",),
    "stages/construction/splits.py": ("tests/construction/test_splits.py",),
}

# Not mutated, but imported by the tests (tests/scibench_testing uses benchmarks/runs.py): mutmut copies
# these into its `mutants/` beside the mutated `stages/`.
ALSO_COPIED = ("benchmarks",)
CONTAINED_MEMORY = 12 << 30  # a whole mutmut run, all its processes
CONTAINED_PROCESSES = 4096

# mutmut's status words, each mapped to the count it adds to.
STATUS_FIELDS = {
    "killed": "killed",
    "survived": "survived",
    "timeout": "timeout",
    "suspicious": "suspicious",
    "skipped": "skipped",
    "no tests": "no_tests",
}
COUNT_FIELDS = ("mutants", "killed", "survived", "timeout", "suspicious", "skipped", "no_tests", "other")
RESULT_LINE = re.compile(r"^\s+(\S+): (.+)$")


def mutmut_table(module: str, tests: Iterable[str]) -> str:
    """The `[tool.mutmut]` table that mutates `module` and runs only `tests`."""
    pattern = module if module.endswith(".py") else f"{module}/*"
    test_list = ", ".join(f'"{path}"' for path in tests)
    also = ", ".join(f'"{path}"' for path in ALSO_COPIED)
    return (
        "\n[tool.mutmut]\n"
        'source_paths = ["stages"]\n'
        f"also_copy = [{also}]\n"
        f'only_mutate = ["{pattern}"]\n'
        f"pytest_add_cli_args_test_selection = [{test_list}]\n"
        # The scratch copy lives inside the checkout; every run starts from a fresh copy instead.
        "use_git_change_detection = false\n"
    )


def prepare(module: str, tests: Iterable[str], root: Path, work: Path) -> Path:
    """A fresh scratch copy of `stages/`, `benchmarks/` and `tests/` under `work`, configured for `module`."""
    scratch = work / module.removesuffix(".py").replace("/", ".")
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__")
    for folder in ("stages", *ALSO_COPIED, "tests"):
        shutil.copytree(root / folder, scratch / folder, ignore=ignore)
    pyproject = (root / "pyproject.toml").read_text()
    (scratch / "pyproject.toml").write_text(pyproject + mutmut_table(module, tests))
    return scratch


def parse_results(text: str) -> dict[str, str]:
    """Mutant name -> status from the output of `mutmut results --all true`."""
    statuses = {}
    for line in text.splitlines():
        match = RESULT_LINE.match(line)
        if match:
            statuses[match.group(1)] = match.group(2).strip()
    return statuses


def count(statuses: Mapping[str, str]) -> dict[str, int | float]:
    """Counts per outcome and the killed share; statuses outside `STATUS_FIELDS` count as `other`."""
    counts: dict[str, int | float] = dict.fromkeys(COUNT_FIELDS, 0)
    for status in statuses.values():
        counts[STATUS_FIELDS.get(status, "other")] += 1
    counts["mutants"] = len(statuses)
    return {**counts, "killed_share": killed_share(counts)}


def killed_share(counts: Mapping[str, int | float]) -> float:
    """Killed / (mutants - skipped), to four places; 0.0 when nothing was tested."""
    tested = counts["mutants"] - counts["skipped"]
    return round(counts["killed"] / tested, 4) if tested else 0.0


def total(per_module: Mapping[str, Mapping[str, int | float]]) -> dict[str, int | float]:
    """The counts of several modules added up, the share recomputed and the seconds summed."""
    summed: dict[str, int | float] = {
        field: sum(module[field] for module in per_module.values()) for field in (*COUNT_FIELDS, "seconds")
    }
    summed["seconds"] = round(summed["seconds"], 1)
    return {**summed, "killed_share": killed_share(summed)}


def contained_totals() -> cgroups.Cgroup | None:
    """A cgroup holding a whole mutmut run (root only): a mutant of a limit must not bomb the host."""
    if os.geteuid() != 0:
        return None
    return cgroups.create(cgroups.Totals(memory_bytes=CONTAINED_MEMORY, processes=CONTAINED_PROCESSES,
                                         cpu_cores=float(os.cpu_count() or 1), cpu_seconds=float("inf")))


def containment(group: cgroups.Cgroup | None) -> list[str]:
    """Run mutmut in its own PID namespace and cgroup when root.

    Mutants of the sandbox run as root: one that inverts a test of whose process to signal, or
    drops a process limit, would otherwise SIGTERM every process on the host or fork-bomb it
    (both happened). In a PID namespace a mutant can signal only the run's own processes.
    """
    if os.geteuid() != 0:
        return []
    prefix = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"]
    return command.enter_cgroups(group.procs_files if group else []) + prefix


def mutate(module: str, root: Path, work: Path, jobs: int) -> tuple[dict, list[str]]:
    """Run mutmut on one module; its counts (with the tests used and wall seconds) and survivors."""
    tests = [path for path in MODULE_TESTS[module] if (root / path).exists()]
    missing = sorted(set(MODULE_TESTS[module]) - set(tests))
    if missing:
        print(f"{module}: no {', '.join(missing)} yet; running {', '.join(tests) or 'no tests'}")
    if not tests:
        raise FileNotFoundError(f"none of the tests for {module} exist: {MODULE_TESTS[module]}")
    scratch = prepare(module, tests, root, work)
    mutmut = [sys.executable, "-m", "mutmut"]
    start = time.monotonic()
    group = contained_totals()
    try:
        run = subprocess.run([*containment(group), *mutmut, "run", "--max-children", str(jobs)], cwd=scratch,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    finally:
        if group is not None:
            group.remove()
    seconds = time.monotonic() - start
    (scratch / "mutmut-run.log").write_text(run.stdout)
    if run.returncode != 0:
        raise RuntimeError(f"mutmut failed on {module} (exit {run.returncode}); see {scratch / 'mutmut-run.log'}")
    results = subprocess.run([*mutmut, "results", "--all", "true"], cwd=scratch,
                             stdout=subprocess.PIPE, text=True, check=True)
    statuses = parse_results(results.stdout)
    if not statuses:
        raise RuntimeError(f"mutmut reported no mutants for {module}; see {scratch / 'mutmut-run.log'}")
    survivors = sorted(f"{name}: {status}" for name, status in statuses.items() if status != "killed")
    return {**count(statuses), "seconds": round(seconds, 1), "tests": tests}, survivors


def previous_modules(path: Path) -> dict:
    """The per-module figures of the last run that `MODULE_TESTS` still lists.

    A run of some modules replaces only their figures.
    """
    try:
        modules = json.loads(path.read_text())["modules"]
    except (OSError, ValueError, KeyError):
        return {}
    return {name: figures for name, figures in modules.items() if name in MODULE_TESTS}


def main() -> None:
    """`python -m benchmarks.mutation [MODULE ...]` (every module in `MODULE_TESTS` by default)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("modules", nargs="*", metavar="MODULE",
                        help=f"modules to mutate (default: all of {', '.join(MODULE_TESTS)})")
    parser.add_argument("--work", type=Path, default=Path(".cache/mutation"), help="scratch directory")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="mutants run at once")
    parser.add_argument("--out", type=Path, default=METRICS / "mutation.json")
    args = parser.parse_args()
    unknown = set(args.modules) - set(MODULE_TESTS)
    if unknown:
        parser.error(f"not in MODULE_TESTS: {', '.join(sorted(unknown))}")
    root = Path.cwd()
    per_module = previous_modules(args.out)
    for module in args.modules or MODULE_TESTS:
        per_module[module], survivors = mutate(module, root, args.work.resolve(), args.jobs)
        result = per_module[module]
        print(f"{module}: {result['killed']} of {result['mutants']} mutants killed "
              f"({result['killed_share']:.1%}) in {result['seconds']} s")
        for name in survivors:
            print(f"  not killed: {name}")
    summary = total(per_module)
    write_json(args.out, {"tool": f"mutmut {importlib.metadata.version('mutmut')}",
                          "modules": per_module, "total": summary})
    print(f"total: {summary['killed']} of {summary['mutants']} mutants killed ({summary['killed_share']:.1%}); "
          f"written to {args.out}")


if __name__ == "__main__":
    main()
