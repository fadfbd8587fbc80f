"""Instantiate templates on generated datasets: bind, derive, verify, build the OEQ and MCQ versions.

Each candidate goes through the verifier, and every rejection is counted by its reason (SDA reports
its 779 / 324 / 86): the template offers no binding on the dataset, a placeholder stays unresolved,
the binding names a column the table does not have, the derived answer is undefined, the question
leaks the answer, a data-free guess (0, 1/2, +-1, a named variable's declared midpoint or bounds) lands
within the tolerance, the candidate repeats an earlier one, or fewer than three distractors differ from
the answer and from each other. MCQ distractors come from SDA's four perturbations in order:
Diffusion and Confusion (the template's own), Randomization (a new binding with another answer)
and Default (a numeric transform); each option records the perturbation that made it, so a chosen
distractor names the error.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from dataclasses import dataclass

import numpy as np

from stages.generate.sda.templates import Binding, Context, Template
from stages.hashing import content_hash

LETTERS = "ABCD"
COLUMN_SLOTS = ("variable", "condition", "x", "y", "cause", "effect", "target", "f1", "f2", "output")
LEVEL_SLOTS = ("level", "a", "b")
DEFAULT_TRANSFORMS = ((2.0, "doubled"), (0.5, "halved"), (-1.0, "negated"), (10.0, "times ten"))


@dataclass(frozen=True)
class Option:
    """An MCQ option: its shown value and the perturbation that produced it (None: the answer)."""

    value: float | str
    perturbation: str | None


def candidates(template: Template, context: Context, seed: int, attempts: int,
               rejected: Counter) -> list[dict]:
    """Up to `attempts` verified instances of one template on one dataset."""
    found, seen = [], set()
    for attempt in range(attempts):
        rng = np.random.default_rng([seed, int(content_hash([template.id, context.scenario.id, attempt], 8), 16)])
        binding = template.bind(context, rng)
        reason, instance = _verified(template, context, binding, seen, rng)
        if reason is not None:
            rejected[reason] += 1
            continue
        seen.add(instance["question"])
        found.append(instance)
    return found


def correct(value: float | str, answer: float | str, tolerance: float) -> bool:
    """Whether a handed-in value matches the answer (relative tolerance for numbers, exact for entities)."""
    if isinstance(answer, str):
        return isinstance(value, str) and value.strip() == answer
    try:
        value = float(value)
    except (TypeError, ValueError):
        return False
    return math.isfinite(value) and abs(value - answer) <= tolerance * max(abs(answer), 1e-9)


def _verified(template: Template, context: Context, binding: Binding | None, seen: set[str],
              rng: np.random.Generator) -> tuple[str | None, dict | None]:
    if binding is None:
        return "no_binding", None
    columns, levels = set(context.table.columns), set(context.levels())
    if any(binding.get(slot, "") not in columns for slot in COLUMN_SLOTS if slot in binding) or any(
            binding[slot] not in levels for slot in LEVEL_SLOTS if slot in binding):
        return "schema_mismatch", None
    try:
        question = template.question(context, binding)
    except (KeyError, IndexError):
        return "unresolved_placeholder", None
    if any(field for _, field, _, _ in string.Formatter().parse(question) if field):
        return "unresolved_placeholder", None
    answer = derived(template, context, binding)
    if answer is None or (isinstance(answer, float) and not math.isfinite(answer)):
        return "undefined_answer", None
    if _leaks(question, answer):
        return "answer_leakage", None
    if isinstance(answer, float) and any(correct(guess, answer, template.tolerance)
                                         for guess in data_free_guesses(context, question)):
        return "guessable_without_data", None
    if question in seen:
        return "near_duplicate", None
    options = _options(template, context, binding, answer, rng)
    if options is None:
        return "distractors_not_distinct", None
    order = rng.permutation(len(options))
    shuffled = [options[i] for i in order]
    label = LETTERS[[o.perturbation for o in shuffled].index(None)]
    instance = {"template": template.id, "task_type": template.task_type, "question": question,
                "answer": answer, "answer_kind": template.answer, "tolerance": template.tolerance,
                "options": [o.value for o in shuffled], "option_perturbations": [o.perturbation for o in shuffled],
                "correct_option": label, "binding": binding}
    return None, instance


def data_free_guesses(context: Context, question: str) -> list[float]:
    """Numbers a responder that never opened the table would offer.

    0, +-1, 1/2, and the midpoint and ends of the declared range of every variable the question names.
    """
    guesses = [0.0, 0.5, 1.0, -1.0]
    for variable in (*context.scenario.variables, *context.scenario.distractors):
        if variable.name in question:
            guesses += [variable.low, variable.high, (variable.low + variable.high) / 2]
    return guesses


def _options(template: Template, context: Context, binding: Binding, answer: float | str,
             rng: np.random.Generator) -> list[Option] | None:
    chosen = [Option(answer, None)]

    def offer(value: float | str, perturbation: str) -> None:
        if len(chosen) < 4 and _distinct(value, [o.value for o in chosen], template.tolerance):
            chosen.append(Option(value, perturbation))

    for name in str(binding.get("candidates", "")).split(", "):  # an entity question that lists its choices
        if name:
            offer(name, "diffusion")
    for perturbation, variants in (("diffusion", template.diffusion), ("confusion", template.confusion)):
        for variant in variants(context, binding):
            offer(derived(template, context, variant), perturbation)
    for _ in range(8):
        other = template.bind(context, rng)
        if other is not None:
            offer(derived(template, context, other), "randomization")
    if template.answer == "number":
        for factor, _ in DEFAULT_TRANSFORMS:
            offer(answer * factor, "default")
    else:
        for name in [*context.numeric_columns(), *context.levels()]:
            offer(name, "default")
    return chosen if len(chosen) == 4 else None


def derived(template: Template, context: Context, binding: Binding) -> float | str | None:
    """The template's answer, or None where the analysis has no result on this data.

    A singular fit, the log of a non-positive value or an empty subset has no result.
    """
    with np.errstate(all="ignore"):
        try:
            return template.derive(context, binding)
        except (ValueError, ArithmeticError, np.linalg.LinAlgError, KeyError, IndexError):
            return None


def _distinct(value: float | str | None, taken: list[float | str], tolerance: float) -> bool:
    if value is None:
        return False
    if isinstance(value, str):
        return value not in taken
    if not math.isfinite(value):
        return False
    return all(abs(value - other) > 2 * tolerance * max(abs(other), abs(value), 1e-9) for other in taken)


def _leaks(question: str, answer: float | str) -> bool:
    """A number in the question equal to the answer at the precision shown (entities are named by design)."""
    if isinstance(answer, str):
        return False
    shown = {float(token) for token in re.findall(r"-?\d+\.?\d*(?:e-?\d+)?", question)}
    return any(abs(number - answer) <= 1e-3 * max(abs(answer), 1e-9) for number in shown)
