"""`make bench`, the build part: a whole `dvc repro` at one profile, timed stage by stage.

    python -m benchmarks.build [--profile full] [--work .cache/bench-build] [--until report]

The checkout's tracked files are copied to `<work>/project` (a fresh project: no data, no DVC or
resume cache), `profile` is set, and one `dvc repro` builds it, as a user runs it, with a local
Prefect server up for the flows; each stage is timed from the `Running stage` line DVC prints for
it to the next one's (or the end). Measured, never extrapolated:
- `stages`: seconds of every stage, and `phases`: their sums (synthesize, ingest, align, construct,
  generate, evaluate, score, validity, report, other);
- `construct_by_task`: per task, the queries staged and the annotator runs labelled and verified,
  their discards and the seconds they took (from the build's resume store, which records each
  staging and run), with the drawn / labelled / kept counts of `verification.json`;
- the build's validity summary (`processed/metrics/validity.json` of the copy), kept as
  `processed/metrics/validity_<profile>.json` in this checkout.
The figures are written after every stage to `build_<profile>` of `processed/metrics/
bench_construction.json` (beside the annotator throughput of `benchmarks.construction`), so a
run stopped halfway keeps what it measured; `--until <stage>` builds that stage and what it needs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from benchmarks.runs import prefect_env
from stages.construction.resume import ResumeStore
from stages.hashing import write_json
from stages.layout import METRICS
from stages.yamlfile import read_yaml

CHECKOUT = Path(__file__).resolve().parents[1]  # holds stages/, flows/ and benchmarks/
RUNNING = re.compile(r"Running stage '([^']+)'")
PHASES = ("synthesize", "ingest", "align", "construct", "generate", "evaluate", "score", "validity", "report")


def copy_checkout(target: Path) -> Path:
    """The checkout's tracked files in `target` (emptied first), as a fresh clone holds them."""
    shutil.rmtree(target, ignore_errors=True)
    names = subprocess.run(["git", "ls-files", "-z"], cwd=CHECKOUT, capture_output=True, check=True).stdout
    for name in filter(None, names.decode().split("\0")):
        if (CHECKOUT / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(CHECKOUT / name, target / name)
    subprocess.run(["git", "init", "-q"], cwd=target, check=True)
    return target


def phase_of(stage: str) -> str:
    """The phase a stage counts towards (`evaluate@oracle` -> evaluate)."""
    name = stage.split("@")[0]
    if name == "generated_validity":
        return "generate"
    return name if name in PHASES else "other"


def profile_key(result: dict) -> str:
    """Where a build's figures go in bench_construction.json: `build_<profile>`."""
    return f"build_{result['profile']}"


def keep(path: Path, key: str, value: dict) -> None:
    """Set one key of a metrics file that other benches write keys of too."""
    figures = json.loads(path.read_text()) if path.is_file() else {}
    write_json(path, {**figures, key: value})


def construct_by_task(project: Path) -> dict:
    """Per task: annotator runs and seconds from the resume store; drawn / labelled / kept counts."""
    rows = ResumeStore(project / ".cache" / "construct").summary()
    report = project / "processed" / "benchmark" / "verification.json"
    tasks = json.loads(report.read_text())["tasks"] if report.is_file() else {}
    for task_id, entry in tasks.items():
        rows.setdefault(task_id, {}).update({name: entry.get(name) for name in
                                             ("queries_drawn", "queries_labelled", "queries_verified")})
    return rows


def measure(profile: str, work: Path, until: str | None) -> dict:
    """Build at `profile` in a fresh copy under `work`, stage by stage; the figures (see the docstring)."""
    project = copy_checkout(work / "project")
    params = read_yaml(project / "params.yaml")
    params["profile"] = profile
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    out = METRICS / "bench_construction.json"
    result: dict = {"profile": profile, "cores": os.cpu_count(), "stages": {}, "phases": {},
                    "note": "wall seconds of each stage within one `dvc repro` from a fresh copy, this machine"}
    with prefect_env(work) as env:
        env = env | {"PATH": f"{Path(sys.executable).parent}:{env['PATH']}"}
        code = _repro(project, env, [until] if until else [], result, out)
    result["exit_code"] = code
    if code == 0:
        result.pop("tail", None)  # the end of DVC's output, kept only to say why a build failed
    keep(out, profile_key(result), result)
    validity = project / "processed" / "metrics" / "validity.json"
    if validity.is_file():
        shutil.copyfile(validity, METRICS / f"validity_{profile}.json")
    return result


def _repro(project: Path, env: dict[str, str], targets: list[str], result: dict, out: Path) -> int:
    """One `dvc repro`, each stage timed from its `Running stage` line to the next (or the end)."""
    started = time.monotonic()
    current, since = None, started

    def close(now: float) -> None:
        if current is not None:
            seconds = round(now - since, 1)
            result["stages"][current] = seconds
            phase = phase_of(current)
            result["phases"][phase] = round(result["phases"].get(phase, 0.0) + seconds, 1)
            result["total_seconds"] = round(now - started, 1)
            if current == "construct":
                result["construct_by_task"] = construct_by_task(project)
            keep(out, profile_key(result), result)
            print(f"{current}: {seconds:.0f} s", flush=True)

    with subprocess.Popen(["dvc", "repro", *targets], cwd=project, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True) as proc:
        for line in proc.stdout:
            found = RUNNING.match(line)
            if found:
                now = time.monotonic()
                close(now)
                current, since = found.group(1), now
            result["tail"] = (result.get("tail", "") + line)[-3000:]
        code = proc.wait()
    close(time.monotonic())
    return code


def main() -> None:
    """See the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="full", choices=["tiny", "default", "full"])
    parser.add_argument("--work", type=Path, default=Path(".cache/bench-build"))
    parser.add_argument("--until", default=None, help="stop after this stage")
    args = parser.parse_args()
    result = measure(args.profile, args.work.resolve(), args.until)
    print(json.dumps(result["phases"], indent=2), f"\ntotal {result.get('total_seconds', 0) / 60:.1f} min")


if __name__ == "__main__":
    main()
