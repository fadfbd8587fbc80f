"""Configured agents on the generated instances, in the sandbox: their accuracy and error types; the floors' gate.

    python -m stages.generate.sda.attempts AGENT [--split test] [--limit N] [--benchmark DIR]
    python -m stages.generate.sda.attempts --gate        (the DVC stage `generated_validity`)

Each instance is asked in both formats, one sandboxed run each, exactly as the evaluation runs an
agent on a catalog query: the workspace holds `prompt.md` (the question; for an MCQ the options;
the catalog's answer-format block) and `data/<dataset>.parquet`, nothing else. What the agent
hands in is parsed by the catalog's hypothesis path (realistic filter included) and judged by
`evaluate.judged`; `evaluate.summary` gives accuracy and NER by format, task type and domain.
Writes processed/generated_runs/<benchmark>/<agent>.json (no gold in it); `--llm-fallback` adds the
pinned judge's second look at the OEQ misses, counted apart (`fallback.py`).

The gate runs the data-free floors (`generate.floors`) on the test split of every generated
benchmark (SDA-Synth and SDA-Real) and fails naming the floor, benchmark and format whose accuracy
exceeds chance by more than sampling allows (one-sided 99.9 %: chance + 3.09 sd + 2 / n). Chance is
1/k for an MCQ of k options (four, or three for a three-level answer) or an entity question
over k choices, 0 for a number. The figures go to
processed/metrics/generated_validity.json.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd

from stages.catalog import AnswerSpec, HypothesisSpec
from stages.construction.prompts import render_answer_block
from stages.evaluation.agents import AGENTS, QueryContext
from stages.evaluation.harness import run_attempt
from stages.generate.sda.evaluate import summary
from stages.generate.sda.fallback import fallback
from stages.generate.sda.instances import LETTERS
from stages.hashing import write_json
from stages.layout import METRICS
from stages.params import AgentParams, load_params
from stages.sandbox import Limits, debris
from stages.scoring.query.outcomes import is_realistic, parse_answer

BENCHMARKS = (Path("processed/generated/sda"), Path("processed/generated/sda_real"))
RUNS = Path("processed/generated_runs")
Z = 3.09  # one-sided 99.9 %


def load(benchmark: Path, split: str) -> list[dict]:
    """The split's instances with their private answers (as `evaluate.judged` takes them), in id order."""
    shown = pd.read_parquet(benchmark / "instances.parquet")
    shown = shown[shown["split"] == split]
    mcq = shown[shown["format"] == "mcq"]
    options_text = dict(zip(mcq["instance_id"], mcq["options"], strict=True))
    private = pd.read_parquet(benchmark / "private" / "answers.parquet").set_index("instance_id")
    rows = []
    for row in shown[shown["format"] == "oeq"].sort_values("instance_id").to_dict("records"):
        secret = private.loc[row["instance_id"]]
        rows.append(row | {"answer": json.loads(secret["answer"]), "answer_kind": secret["answer_kind"],
                           "tolerance": float(secret["tolerance"]), "correct_option": secret["correct_option"],
                           "options": json.loads(secret["options"]), "options_text": options_text[row["instance_id"]],
                           "option_perturbations": json.loads(secret["option_perturbations"])})
    return rows


def choices(benchmark: Path, dataset: str) -> list[str]:
    """What an entity answer may name: the dataset's numeric columns and the levels of its text columns."""
    table = pd.read_parquet(benchmark / dataset)
    numeric = sorted(c for c in table.columns if pd.api.types.is_numeric_dtype(table[c]))
    levels = sorted({str(v) for c in table.columns if c != "sample_id" and not pd.api.types.is_numeric_dtype(
        table[c]) for v in table[c].dropna().unique()})
    return numeric + levels


def answer_spec(instance: dict, form: str, entity_choices: list[str]) -> AnswerSpec:
    """The public answer spec of one format of an instance (never its answer)."""
    if form == "mcq":
        letters = list(LETTERS[:len(instance["options"])])
        return AnswerSpec(hypothesis=HypothesisSpec(format="category", categories=letters, rel_tol=0.0,
                                                    description="the letter of the correct option"))
    if instance["answer_kind"] == "entity":
        return AnswerSpec(hypothesis=HypothesisSpec(format="category", categories=entity_choices, rel_tol=0.0,
                                                    description=instance["question"]))
    return AnswerSpec(hypothesis=HypothesisSpec(format="number", description=instance["question"],
                                                rel_tol=instance["tolerance"]))


def prompt(instance: dict, form: str, spec: AnswerSpec) -> str:
    """What `prompt.md` says for one format of an instance."""
    options = (f"Options:\n\n{instance['options_text']}\n\nAnswer with the letter of the correct option.\n\n"
               if form == "mcq" else "")
    name = Path(instance["dataset"]).name
    return (f"# A data analysis question\n\n{instance['question']}\n\n{options}"
            f"The data: `data/{name}`, one row per sample, identified by `sample_id`.\n\n{render_answer_block(spec)}")


def attempt_all(instances: list[dict], benchmark: Path, name: str, agent: AgentParams, limits: Limits,
                workers: int = 2) -> dict[tuple[str, str], object]:
    """Every instance in both formats, one sandboxed run each; the handed-in value (None when unusable)."""
    with tempfile.TemporaryDirectory(prefix=debris.temp_prefix("generated")) as scratch:
        public: dict[str, Path] = {}
        for dataset in sorted({i["dataset"] for i in instances}):
            folder = Path(scratch) / "public" / Path(dataset).stem
            folder.mkdir(parents=True)
            (folder / Path(dataset).name).write_bytes((benchmark / dataset).read_bytes())
            public[dataset] = folder
        private = Path(scratch) / "private"
        private.mkdir()
        entity = {dataset: choices(benchmark, dataset) for dataset in public}

        def one(item: tuple[dict, str]) -> tuple[tuple[str, str], object]:
            instance, form = item
            spec = answer_spec(instance, form, entity[instance["dataset"]])
            program = AGENTS[agent.kind](agent.options, QueryContext(f"{instance['instance_id']}-{form}",
                                                                     "generated", private))
            attempt, _ = run_attempt(prompt(instance, form, spec), public[instance["dataset"]], program, limits,
                                     [Path.cwd().resolve()], False, collect=())
            if attempt.infra_error is not None:
                raise RuntimeError(f"agent {name} on {instance['instance_id']} ({form}): {attempt.infra_error}")
            parsed = parse_answer(spec, attempt.answer_text) if attempt.answer_text is not None else None
            value = parsed["answer"] if parsed is not None and is_realistic(spec, parsed) else None
            return (instance["instance_id"], form), value

        with ThreadPoolExecutor(workers) as pool:
            return dict(pool.map(one, [(i, form) for i in instances for form in ("oeq", "mcq")]))


def chance(instances: list[dict], benchmark: Path, form: str) -> float:
    """Expected accuracy of a blind guess: 1/k per MCQ of k options or entity question of k choices, 0 per number."""
    if form == "mcq":
        return sum(1 / len(i["options"]) for i in instances) / len(instances)
    sizes = {d: len(choices(benchmark, d)) for d in {i["dataset"] for i in instances}}
    return sum(1 / sizes[i["dataset"]] if i["answer_kind"] == "entity" else 0.0 for i in instances) / len(instances)


def bound(p: float, n: int) -> float:
    """The most a blind guesser may score on n items without the gate calling it skill."""
    return p + Z * math.sqrt(p * (1 - p) / n) + 2 / n


def gate(floors: dict[str, AgentParams], limits: Limits, benchmarks: tuple[Path, ...] = BENCHMARKS,
         split: str = "test") -> dict:
    """Run every floor on every generated benchmark's split; the figures, and the failures."""
    figures, failures = {}, []
    for benchmark in (b for b in benchmarks if (b / "instances.parquet").is_file()):
        instances = load(benchmark, split)
        if not instances:
            continue
        for floor, agent in floors.items():
            report = summary(instances, attempt_all(instances, benchmark, floor, agent, limits))
            for form in ("oeq", "mcq"):
                accuracy, p = report[form]["all"]["all"]["accuracy"], chance(instances, benchmark, form)
                limit = bound(p, len(instances))
                figures.setdefault(benchmark.name, {}).setdefault(floor, {})[form] = {
                    "n": len(instances), "accuracy": accuracy, "chance": round(p, 4), "bound": round(limit, 4)}
                if accuracy > limit:
                    failures.append(f"{benchmark}: the data-free {floor} agent scores {accuracy:.3f} on the {form}"
                                    f" questions of the {split} split, above chance {p:.3f} (bound {limit:.3f})")
    return {"split": split, "floors": figures, "failures": failures}


def main() -> None:
    """CLI: one agent on one benchmark, or the floors' gate."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("agent", nargs="?")
    parser.add_argument("--gate", action="store_true")
    parser.add_argument("--split", default="test", choices=("train", "test"))
    parser.add_argument("--limit", type=int, default=None, help="the first N instances by id")
    parser.add_argument("--benchmark", type=Path, default=BENCHMARKS[0])
    parser.add_argument("--llm-fallback", action="store_true",
                        help="ask the pinned judge (params judge.model) about OEQ misses, counted apart")
    args = parser.parse_args()
    debris.start_harness()
    params = load_params()
    if args.gate:
        floors = {name: params.agents[name] for name in params.generate.floors}
        result = gate(floors, params.evaluate.limits.to_limits(), split=args.split)
        write_json(METRICS / "generated_validity.json", result)
        for failure in result["failures"]:
            print(f"generated_validity: {failure}", file=sys.stderr)
        print(f"generated_validity: {len(result['failures'])} failures; figures in"
              f" {METRICS / 'generated_validity.json'}")
        sys.exit(1 if result["failures"] else 0)
    if args.agent not in params.agents:
        parser.error(f"agent {args.agent!r} is not configured in params.yaml agents")
    if args.llm_fallback and params.judge.model is None:
        parser.error("--llm-fallback needs a judge model (params.yaml judge.model)")
    instances = load(args.benchmark, args.split)[: args.limit]
    responses = attempt_all(instances, args.benchmark, args.agent, params.agents[args.agent],
                            params.evaluate.limits.to_limits())
    report = summary(instances, responses)
    extra = {"fallback": fallback(instances, responses, params.judge)} if args.llm_fallback else {}
    out = RUNS / args.benchmark.name / f"{args.agent}.json"
    write_json(out, extra | {"agent": args.agent, "split": args.split, "summary": report,
                     "responses": [{"instance_id": i, "format": f, "response": v}
                                   for (i, f), v in sorted(responses.items())]})
    print(f"{args.agent}: MCQ accuracy {report['mcq']['all']['all']['accuracy']}, OEQ accuracy"
          f" {report['oeq']['all']['all']['accuracy']} on {len(instances)} instances; written to {out}")


if __name__ == "__main__":
    main()
