"""The `statistic` family: a hypothesis answered by a regression, correlation or trend across entities.

The answer block's description (then the prompt) names the statistic and its variables:
- "slope of the (ordinary least-squares) line / regression of Y on X", "sensitivity of Y to X":
  the OLS slope of Y on X across entities (statsmodels), or for a `boolean` answer whether that
  slope differs from 0 at the 5 % level;
- "(Spearman / rank) correlation between Y and X": Pearson's r, or Spearman's rho when named.
Y and X are resolved by `variables.resolve` (attributes, defined expressions, series means).
When the statistic or a variable cannot be resolved the answer is the uninformed prior of the
format (the middle of its valid range, `false`, the first category), and stderr says so.
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pandas as pd
import statsmodels.api as sm
from heuristic.handin import Handin
from heuristic.profile import Profile
from heuristic.prompt import Plan, Prompt
from heuristic.variables import resolve
from scipy import stats

END = r"(?=\s*(?:\([^)]*\))?\s*(?:[,.;:]|\bacross\b|\bfor\b|\bin\b|$))"
PATTERNS = (
    ("slope", re.compile(rf"(?:line|regression|fit) of (?:the )?(?P<y>[\w\s-]+?)(?:\s*\([^)]*\))?"
                         rf" on (?:the )?(?P<x>[\w\s-]+?){END}", re.IGNORECASE)),
    ("slope", re.compile(rf"sensitivity of (?:the |this )?(?P<y>[\w\s-]+?) to (?:the )?(?P<x>[\w\s-]+?){END}",
                         re.IGNORECASE)),
    ("correlation", re.compile(rf"correlation (?:coefficient )?(?:between|of) (?:the )?(?P<y>[\w\s-]+?)"
                               rf" (?:and|with) (?:the )?(?P<x>[\w\s-]+?){END}", re.IGNORECASE)),
)


def find_statistic(texts: list[str]) -> tuple[str, str, str] | None:
    """(statistic, Y phrase, X phrase) from the first text that states one."""
    for text in texts:
        flat = " ".join(text.split())
        for name, pattern in PATTERNS:
            match = pattern.search(flat)
            if match:
                return name, match.group("y").strip(), match.group("x").strip()
    return None


def compute(name: str, y: pd.Series, x: pd.Series, answer: dict, text: str) -> object:
    """The statistic of the paired per-entity values, in the answer's format."""
    table = pd.concat([y.rename("y"), x.rename("x")], axis=1, join="inner").dropna()
    if len(table) < 3 or table["x"].nunique() < 2:
        raise ValueError(f"{len(table)} entities with both values: too few for a {name}")
    if name == "correlation":
        rank = re.search(r"spearman|rank", text, re.IGNORECASE) is not None
        value = (stats.spearmanr if rank else stats.pearsonr)(table["y"], table["x"])[0]
        return round(float(value), 6)
    fit = sm.OLS(table["y"].to_numpy(), sm.add_constant(table["x"].to_numpy())).fit()
    if answer.get("format") == "boolean":
        return bool(fit.pvalues[1] < 0.05)
    return round(float(fit.params[1]), 6)


def prior(answer: dict) -> object:
    """The uninformed answer of a format."""
    low, high = [*(answer.get("valid_range") or []), None, None][:2]
    priors = {"number": (low + high) / 2 if low is not None and high is not None else 0.0,
              "boolean": False, "category": (answer.get("categories") or [""])[0], "list": [],
              "coordinates": [0.0, 0.0]}
    return priors.get(answer.get("format"), 0.0)


def statistic(profile: Profile, prompt: Prompt, plan: Plan) -> Handin:
    """Answer the hypothesis with the statistic the prompt names."""
    answer = prompt.answer
    found = find_statistic([answer.get("description") or "", prompt.text])
    if found is None:
        print("heuristic: no statistic found in the prompt; answering the prior", file=sys.stderr)
        return Handin(None, {"answer": prior(answer)})
    name, y_phrase, x_phrase = found
    y, x = resolve(prompt.text, y_phrase, profile), resolve(prompt.text, x_phrase, profile)
    if y is None or x is None:
        print(f"heuristic: cannot resolve {y_phrase!r} / {x_phrase!r}; answering the prior",
              file=sys.stderr)
        return Handin(None, {"answer": prior(answer)})
    print(f"heuristic: {name} of {y.how} on {x.how}", file=sys.stderr)
    value = compute(name, y.values, x.values, answer, f"{answer.get('description')} {prompt.text}")
    return Handin(None, {"answer": value if np.isscalar(value) else list(value)})
