"""Score responses to generated instances and attribute wrong answers to an error type without annotators.

MCQ: option accuracy (the response's letter against the label). OEQ: numbers within the instance's
relative tolerance, entities by exact match. A wrong answer is attributed by matching it against
the answers the derivation gives under each perturbation: a chosen MCQ distractor names its own;
a wrong OEQ number or entity that equals a perturbed derivation (within the tolerance) takes that
perturbation's type; anything else stays unattributed, a listed name no perturbation gave (label
"listed") included. Perturbations stand for SDA's first-error types: diffusion (roles or values
swapped between variables) for a Variable error, confusion (one local element changed: statistic,
operator, test, naive observational estimate) for a Function or Relationship error, randomization
(another valid assignment) for a Scope error, default (a numeric transform) for a Conclusion error.
NER_E(S) = n_E(S) / o_E(S), o_E(S) the responses in S whose instance had a perturbation of type E
to match (SDA's opportunity count).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from stages.generate.sda.instances import LETTERS, correct

ERROR_TYPES = {"diffusion": "variable", "confusion": "function", "randomization": "scope", "default": "conclusion"}


def judged(instance: dict, response: str | float | None, form: str) -> dict:
    """One response to one instance in one format: correct or not, and the error type it shows (or None)."""
    if form == "mcq":
        letter = str(response or "").strip().upper()[:1]
        hit = letter == instance["correct_option"]
        perturbation = None
        shown = LETTERS[:len(instance["option_perturbations"])]
        if not hit and letter and letter in shown:
            perturbation = instance["option_perturbations"][shown.index(letter)]
        return {"correct": hit, "error": None if hit else ERROR_TYPES.get(perturbation, "unattributed")}
    hit = correct(response, instance["answer"], instance["tolerance"])
    if hit:
        return {"correct": True, "error": None}
    for value, perturbation in zip(instance["options"], instance["option_perturbations"], strict=True):
        if perturbation in ERROR_TYPES and correct(response, value, instance["tolerance"]):
            return {"correct": False, "error": ERROR_TYPES[perturbation]}
    return {"correct": False, "error": "unattributed"}


def summary(instances: list[dict], responses: dict[tuple[str, str], str | float | None]) -> dict:
    """Accuracy and NER by format, task type and domain; `responses` maps (instance_id, format) to an answer."""
    by_id = {instance["instance_id"]: instance for instance in instances}
    cells: dict[tuple[str, str, str], list] = defaultdict(list)
    for (instance_id, form), response in sorted(responses.items(), key=lambda item: item[0]):
        instance = by_id[instance_id]
        verdict = judged(instance, response, form)
        opportunities = {ERROR_TYPES[p] for p in instance["option_perturbations"] if p in ERROR_TYPES}
        for axis, value in (("task_type", instance["task_type"]), ("domain", instance["domain"]), ("all", "all")):
            cells[(form, axis, value)].append((verdict, opportunities))
    report = {}
    for (form, axis, value), judged_cells in sorted(cells.items()):
        errors, chances = Counter(), Counter()
        for verdict, opportunities in judged_cells:
            chances.update(opportunities)
            if verdict["error"] in opportunities:
                errors[verdict["error"]] += 1
        report.setdefault(form, {}).setdefault(axis, {})[value] = {
            "n": len(judged_cells),
            "accuracy": round(sum(v["correct"] for v, _ in judged_cells) / len(judged_cells), 4),
            "ner": {kind: round(errors[kind] / chances[kind], 4) for kind in sorted(chances)},
            "unattributed": sum(v["error"] == "unattributed" for v, _ in judged_cells),
        }
    return report
