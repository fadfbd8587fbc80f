"""The validity gates: a task measures the analysis only if an agent that does not do it cannot pass.

Per task, on the evaluated split, the gates read the scores of:
- the oracle (the annotator script run as an agent): must reach `oracle_min` (the gold is
  reproducible and clears the task's own targets);
- the floors: `fabricate` (plausible invented numbers and artifacts, never opens `data/`), `nodata`
  (answers from the prompt) and `defensive` (zeros and sentinels): at most `floor_max`;
- the reference-model agents (`climatology`, `linear_forcing`, `interpolate`, ...): each at most
  `reference_max`, clearly below the oracle;
- the candidates (the `heuristic` agent: a standard analysis per task family): the benchmark must
  tell an agent that does the analysis from one that hands in a baseline. On every task a
  candidate scores at least the best reference agent and at most the oracle (the oracle is the
  upper bound: a candidate above it means the gold is weaker than a standard method), and its
  overall score exceeds the best reference agent's overall by `candidate_margin` points.
For a hypothesis task, the golds of all its kept queries must vary: the best single constant
answer (`stages.scoring.aggregate.golds`) may match at most `constant_max_share` of them, judged on
a task with at least `constant_min_queries` kept queries (on three, two neighbouring scopes that
agree are a coincidence, not a constant gold). On hypothesis queries the no-data guessers' exact
match rates are bounded and a candidate must match more than both. A task of the build that kept
no query fails too. Every failure is a message naming the task, the gate and the numbers.
"""

from __future__ import annotations

import json
from collections import Counter

from stages.catalog import TaskSpec
from stages.params import ValidityParams
from stages.scoring.aggregate.golds import is_number


class ValidityError(RuntimeError):
    """A task failed a validity gate; the message names the task and the gate."""


def gate_failures(task_id: str, scores: dict[str, float | None], spread: dict,
                  settings: ValidityParams) -> list[str]:
    """Every gate the task fails, as messages naming the task, the gate and the numbers."""
    gates, failures = settings.gates, []
    oracle = scores.get(settings.oracle)
    if oracle is None or oracle < gates.oracle_min:
        failures.append(f"{task_id}: oracle scores {oracle}, the gate needs >= {gates.oracle_min}")
    for agent in settings.floors:
        if (scores.get(agent) or 0.0) > gates.floor_max:
            failures.append(f"{task_id}: {agent} scores {scores[agent]}, the gate allows "
                            f"<= {gates.floor_max}")
    for agent in settings.references:
        if (scores.get(agent) or 0.0) > gates.reference_max:
            failures.append(f"{task_id}: reference agent {agent} scores {scores[agent]}, the "
                            f"gate allows <= {gates.reference_max}")
    failures += candidate_task_failures(task_id, scores, settings)
    share = spread.get("best_constant_share")
    kept = spread.get("gold", {}).get("n")
    judged = kept is None or kept >= gates.constant_min_queries
    if share is not None and judged and share > gates.constant_max_share:
        constant = spread["best_constant"]
        shown = f"{constant:.4g}" if is_number(constant) else json.dumps(constant)
        failures.append(f"{task_id}: golds are near-constant: the answer {shown} "
                        f"matches {share:.0%} of queries, the gate allows "
                        f"{gates.constant_max_share:.0%}")
    return failures


def best_reference(scores: dict[str, float | None], settings: ValidityParams) -> tuple[str | None, float]:
    """(name, score) of the best-scoring reference agent (a missing score counts as 0)."""
    ranked = [(scores.get(agent) or 0.0, agent) for agent in settings.references]
    score, agent = max(ranked, key=lambda item: item[0], default=(0.0, None))
    return agent, score


def candidate_task_failures(task_id: str, scores: dict[str, float | None],
                            settings: ValidityParams) -> list[str]:
    """A candidate below the best reference agent or above the oracle on one task."""
    failures = []
    reference, best = best_reference(scores, settings)
    oracle = scores.get(settings.oracle)
    for candidate in settings.candidates:
        score = scores.get(candidate) or 0.0
        if score < best:
            failures.append(f"{task_id}: candidate {candidate} scores {score}, below reference agent "
                            f"{reference} ({best}); the gate needs >= {best}")
        if oracle is not None and score > oracle:
            failures.append(f"{task_id}: candidate {candidate} scores {score}, above the oracle "
                            f"({oracle}); the gate needs <= {oracle}")
    return failures


def overall_failures(overall: dict[str, float], settings: ValidityParams) -> list[str]:
    """Each candidate whose overall score is not `candidate_margin` above every reference agent's."""
    reference, best = best_reference(overall, settings)
    margin, failures = settings.gates.candidate_margin, []
    for candidate in settings.candidates:
        if overall[candidate] < best + margin:
            failures.append(f"overall: candidate {candidate} scores {overall[candidate]}, the gate "
                            f"needs >= {best + margin:g} (reference agent {reference} {best} + "
                            f"margin {margin:g})")
    return failures


def empty_task_failures(verification: dict) -> list[str]:
    """A task of the build that kept no query fails: it would otherwise vanish from the report."""
    failures = []
    for task_id, entry in sorted(verification["tasks"].items()):
        if task_id in verification["tasks_kept"]:
            continue
        stages = Counter(d["stage"] for d in entry["discarded"] if not d["reason"].startswith("query pool is full"))
        failures.append(f"{task_id}: no query was verified ({entry['queries_drawn']} tried; discarded at "
                        + ", ".join(f"{stage} {n}" for stage, n in sorted(stages.items()))
                        + "; reasons in processed/benchmark/verification.json)")
    return failures


def hypothesis_failures(rates: dict[str, float | None], settings: ValidityParams) -> list[str]:
    """The no-data guessers above their bounds, or a candidate not above both, on hypothesis queries."""
    gates, failures = settings.hypothesis, []
    if rates.get(gates.nodata) is None:
        return []
    bounds = [(gates.nodata, gates.nodata_max)] + ([(gates.prior, gates.prior_max)] if gates.prior else [])
    for agent, bound in bounds:
        if rates[agent] > bound:
            failures.append(f"hypotheses: {agent} matches {rates[agent]:.1f} % of the gold answers, "
                            f"the gate allows <= {bound:g} %")
    ceiling = max(rates[agent] for agent, _ in bounds)
    for candidate in settings.candidates:
        if rates[candidate] <= ceiling:
            failures.append(f"hypotheses: candidate {candidate} matches {rates[candidate]:.1f} %, not "
                            f"above the no-data guessers ({ceiling:.1f} %)")
    return failures


def chance_level(spec: TaskSpec, n_entities: list[int]) -> float | None:
    """The share of queries a uniform guess matches.

    1/2 for a boolean, 1/k for k declared categories, the mean of 1/entities for a coordinate or an
    open category (one of the scope's cells or molecules); None for a continuous number.
    """
    hypothesis = spec.answer.hypothesis
    if hypothesis.format == "boolean":
        return 0.5
    if hypothesis.format == "category" and hypothesis.categories:
        return round(1 / len(hypothesis.categories), 6)
    if hypothesis.format in ("coordinates", "category") and n_entities:
        return round(sum(1 / n for n in n_entities) / len(n_entities), 6)
    return None
