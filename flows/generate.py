"""Prefect flow `generate`: the SDA-style generated benchmark, one task run per scenario.

`python -m flows.generate` is the DVC stage `generate`; it writes processed/generated/sda/ (public
datasets and questions, private answers and generator metadata, summary.json with the counts of
every rejection reason), processed/generated/sda_real/ (the same, the table-only templates on every
repository's entities table: SDA-Real) and processed/generated/auto/ (the AutoSciBench loop's
report, experience cards, rounds and kept tasks, their gold under private/). Thin over
`stages.generate`.

The per-item work that is a Prefect task is SDA's per scenario (simulate the dataset, try every
template on it; Python numerics that hold the GIL, no sandbox): two worker processes, or the
workers of an existing Dask cluster (`generate.dask_address`); a task gets the scenario and the
params and returns its dataset and candidates (pickled back), and this process collects them in
scenario order, selects and writes, so the files do not depend on which task finished first.
SDA-Real is one in-process pass. The sandboxed runs (the AutoSciBench loop's floors and an agent
solver) stay in this process: each round's recipe is revised from the verdict of the one before,
and with cards each concept reads the earlier ones'.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from prefect import flow, task

from flows.prefect_api import prefect_api, run_flow
from flows.runners import task_runner
from stages.generate.auto.model import ModelGenerator
from stages.generate.auto.outputs import write_outputs
from stages.generate.auto.solvers import AgentSolver, FloorGate, heuristic_solver
from stages.generate.sda import load_scenarios
from stages.generate.sda.build import on_scenario, select, write
from stages.generate.sda.real import build_real
from stages.layout import REPOSITORIES
from stages.params import AgentParams, AutoParams, Profile, SdaParams, load_params
from stages.sandbox import SandboxLimits, debris

OUT = Path("processed/generated/sda")
REAL_OUT = Path("processed/generated/sda_real")
AUTO_OUT = Path("processed/generated/auto")
SCENARIO_WORKERS = 2  # processes, one per core of the machines `make run` is sized for


@flow(name="generate", flow_run_name="generate sda ({profile})")
def generate_sda(profile: Profile, settings: SdaParams, out_dir: Path = OUT) -> dict:
    """Generate every scenario's dataset and instances, select and split them, write them; the summary."""
    scenario_task = task(on_scenario, name="scenario", task_run_name="scenario {scenario.id}")
    count, seen = settings.scenarios_per_domain[profile], Counter()
    scenarios = []
    for scenario in load_scenarios():
        seen[scenario.domain] += 1
        if seen[scenario.domain] <= count:
            scenarios.append(scenario)
    futures = [scenario_task.submit(scenario, settings) for scenario in scenarios]
    return write(select([future.result() for future in futures], settings.per_pair[profile]), out_dir)


@flow(name="generate-real", flow_run_name="generate sda on the repositories ({profile})")
def generate_sda_real(profile: Profile, settings: SdaParams, repositories: Path = REPOSITORIES,
                      out_dir: Path = REAL_OUT) -> dict:
    """SDA-Real: the table-only templates on every repository's entities table; the summary."""
    return write(build_real(repositories, settings, profile), out_dir)


@flow(name="autoscibench", flow_run_name="autoscibench loop (seed {settings.seed})")
def autoscibench(settings: AutoParams, floors: list[str], agents: dict[str, AgentParams], limits: SandboxLimits,
                 out_dir: Path = AUTO_OUT) -> dict:
    """The AutoSciBench loop over every (domain, task type) concept, with and without experience cards.

    The solver is the offline heuristic or a configured agent (sandboxed); the floors gate every task.
    The generator is the offline one or a model, whose calls go to generator_log.jsonl.
    """
    debris.start_harness()  # after Prefect's own SIGTERM handler: ours cleans up, then calls it
    hidden = [Path.cwd().resolve()]

    def sandboxed(name: str) -> AgentSolver:
        return AgentSolver(name, agents[name], limits.to_limits(), hidden)

    solver = heuristic_solver if settings.solver == "heuristic" else sandboxed(settings.solver)
    gate = FloorGate({name: sandboxed(name) for name in floors})
    generator = ModelGenerator.from_params(settings.generator) if settings.generator.kind == "openai" else None
    log = out_dir / "generator_log.jsonl"
    log.unlink(missing_ok=True)  # a model run's log never outlives it
    summary = write_outputs(out_dir, settings.seed, solver, generator, gate)
    if generator is not None:
        generator.write_log(log)
    return summary


def main() -> None:
    """DVC entry point."""
    params = load_params()
    runner = task_runner(params.generate.dask_address, SCENARIO_WORKERS, processes=True)
    with prefect_api():
        summary = run_flow(generate_sda.with_options(task_runner=runner), params.profile, params.generate.sda)
        print(f"generate@sda: {summary['instances']} instances on {summary['datasets']} datasets written to"
              f" {OUT}; rejected {summary['rejected']}")
        if REPOSITORIES.is_dir():
            real = run_flow(generate_sda_real, params.profile, params.generate.sda)
            print(f"generate@sda_real: {real['instances']} instances on {real['datasets']} repositories written"
                  f" to {REAL_OUT}")
        else:
            print(f"generate@sda_real: skipped, no repositories at {REPOSITORIES} (run `dvc repro align` first)")
        loop = run_flow(autoscibench, params.generate.auto, params.generate.floors, params.agents,
                        params.evaluate.limits)
        print(f"generate@auto: kept {loop['with_cards']['kept']} (with cards), {loop['without_cards']['kept']}"
              f" (without) in {AUTO_OUT}")


if __name__ == "__main__":
    main()
