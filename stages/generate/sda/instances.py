"""Instantiate templates on generated datasets: bind, derive, verify, build the OEQ and MCQ versions.

Each candidate goes through the verifier, and every rejection is counted by its reason (SDA reports
its 779 / 324 / 86): the template offers no binding on the dataset, a placeholder stays unresolved,
the binding names a column the table does not have, the derived answer is undefined, the question
leaks the answer, a data-free guess (0, 1/2, +-1, a named variable's declared midpoint or bounds) lands
within the tolerance, the candidate repeats an earlier one, or fewer than three distractors differ from
the answer and from each other. MCQ distractors come from SDA's four perturbations in order:
Diffusion and Confusion (the template's own), Randomization (a new binding with another answer)
and Default (the answer scaled by a seeded ratio, or another of the table's names), chosen so that
the answer's rank among the options is uniform; each option records the perturbation that made it
("listed": a name the question lists that no perturbation gave), so a chosen distractor names the error.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from dataclasses import dataclass

import numpy as np

from stages.generate.sda.templates import Binding, Context, Template
from stages.generate.sda.templates.base import memo_key
from stages.hashing import content_hash

LETTERS = "ABCD"
MIN_CHOICES = 3  # an entity answer needs at least this many possible answers
COLUMN_SLOTS = ("variable", "condition", "x", "y", "cause", "effect", "target", "f1", "f2", "output")
LEVEL_SLOTS = ("level", "a", "b")
LIST_SLOTS = ("columns", "candidates")  # names joined by ", "
DEFAULT_RATIOS = (1.2, 2.5)  # range of the log-uniform ratio between a Default number and its neighbour


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
        binding = template.bound(context, rng)
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
    if not fits_schema(binding, set(context.table.columns), set(context.levels())):
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
    if isinstance(answer, str) and answer in context.levels() and len(context.levels()) < MIN_CHOICES:
        return "too_few_choices", None  # a level of a two-level factor: a coin flip without the data
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


def fits_schema(binding: Binding, columns: set[str], levels: set[str]) -> bool:
    """Every slot naming a column names one of the table's, a level one of the factor's, a grid numbers.

    List slots hold names joined by ", " (a feature set joins its columns with "+").
    """
    named = [str(binding[slot]) for slot in COLUMN_SLOTS if slot in binding]
    named += [name for slot in LIST_SLOTS if slot in binding
              for item in str(binding[slot]).split(", ") for name in item.split("+")]
    if any(name not in columns for name in named):
        return False
    if any(binding[slot] not in levels for slot in LEVEL_SLOTS if slot in binding):
        return False
    for value in str(binding.get("grid", "0")).split(", "):
        try:
            float(value)
        except ValueError:
            return False
    return True


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
    """The answer and three distractors, with the answer's rank among the four drawn uniformly.

    The names a question lists are all shown. The other candidates come in SDA's order (diffusion,
    confusion, randomization, default) and one enters only while its side of the answer (numbers by
    value, names alphabetically) has room under the drawn count of options below the answer, so a
    responder that never opens the data cannot pick the answer by its rank or centrality. Default
    numbers extend the options outward from the outermost one at seeded ratios, so the answer is not
    their centre; Default names are of the answer's kind (levels for a level, columns for a column),
    so a question whose answer is one of three levels has three options (a column among them would
    give itself away). Where names are too few on one side, the rank gives way and the instance is kept.
    """
    size = min(4, len(context.levels())) if isinstance(answer, str) and answer in context.levels() else 4
    below = int(rng.integers(size))
    draft = _Draft(answer, template.tolerance, size, {True: below, False: size - 1 - below}, [Option(answer, None)])
    listed, perturbed = _perturbed(template, context, binding, rng)
    for name, perturbation in listed:
        draft.offer(name, perturbation, ranked=False)
    for value, perturbation in perturbed:
        draft.offer(value, perturbation)
    if template.answer == "number":
        for ratio in np.exp(rng.uniform(*np.log(DEFAULT_RATIOS), size=12)):
            draft.offer(draft.extended(ratio), "default")
        return draft.options if len(draft.options) == size else None
    levels = list(context.levels())
    names = levels if answer in levels else context.numeric_columns()  # a level among columns gives itself away
    defaults = [(names[i], "default") for i in rng.permutation(len(names))]
    for name, perturbation in defaults:
        draft.offer(name, perturbation)
    for value, perturbation in perturbed + defaults:  # names too few on one side: the rank gives way
        draft.offer(value, perturbation, ranked=False)
    return draft.options if len(draft.options) == size else None


@dataclass
class _Draft:
    """MCQ options being chosen: the answer first, then distractors while their side of the answer has room."""

    answer: float | str
    tolerance: float
    size: int  # options wanted, the answer included
    room: dict[bool, int]  # options still wanted below (True) and above the answer
    options: list[Option]

    def offer(self, value: float | str | None, perturbation: str, ranked: bool = True) -> None:
        """Add the candidate if it is distinct, of the answer's sign, and (when ranked) its side has room."""
        if len(self.options) == self.size or not _distinct(value, [o.value for o in self.options], self.tolerance):
            return
        if not isinstance(self.answer, str) and (value > 0) != (self.answer > 0):
            return  # a number of the other sign would mark the answer's sign as the majority
        if self.room[value < self.answer] > 0 or not ranked:
            self.room[value < self.answer] -= 1
            self.options.append(Option(value, perturbation))

    def extended(self, ratio: float) -> float:
        """A Default number: the outermost option on a side still short, moved outward by `ratio`.

        Rounded like the answer when the answer is round (a count, a share of the rows), so that its
        few digits do not single it out.
        """
        below = self.room[True] > 0
        side = [self.answer] + [o.value for o in self.options[1:] if (o.value < self.answer) == below]
        outer = min(side) if below else max(side)
        value = outer * ratio if (outer > 0) != below else outer / ratio
        places = next((places for places in range(5) if round(self.answer, places) == self.answer), None)
        return float(value if places is None else round(value, places))


def _perturbed(template: Template, context: Context, binding: Binding,
               rng: np.random.Generator) -> tuple[list[tuple[str, str]], list[tuple[float | str | None, str]]]:
    """The names the question lists, and every perturbation's answer in SDA's order, each with its label.

    A listed name is labelled by the perturbation whose answer it equals, else "listed".
    """
    derivations = {kind: [derived(template, context, variant) for variant in variants(context, binding)]
                   for kind, variants in (("diffusion", template.diffusion), ("confusion", template.confusion))}
    listed = [(name, next((kind for kind, values in derivations.items() if name in values), "listed"))
              for name in str(binding.get("candidates", "")).split(", ") if name]
    others = [template.bound(context, rng) for _ in range(8)]
    return listed, [(value, kind) for kind, values in derivations.items() for value in values] + [
        (derived(template, context, other), "randomization") for other in others if other is not None]


def derived(template: Template, context: Context, binding: Binding) -> float | str | None:
    """The template's answer, or None where the analysis has no result on this data.

    A singular fit, the log of a non-positive value or an empty subset has no result. Computed once
    per dataset, derivation and binding: attempts and distractors ask for the same ones again.
    """
    return context.remembered(("derived", template.derive, memo_key(binding)),
                              lambda: _derivation(template, context, binding))


def _derivation(template: Template, context: Context, binding: Binding) -> float | str | None:
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


def stated_numbers(text: str) -> list[float]:
    """Every number a text states, as written (signs and exponents included)."""
    return [float(token) for token in re.findall(r"-?\d+\.?\d*(?:e-?\d+)?", text)]


def _leaks(question: str, answer: float | str) -> bool:
    """A number in the question equal to the answer at the precision shown (entities are named by design)."""
    if isinstance(answer, str):
        return False
    shown = set(stated_numbers(question))
    return any(abs(number - answer) <= 1e-3 * max(abs(answer), 1e-9) for number in shown)
