"""The terminal summary `make run` ends with: one line per agent, readable in 80 columns.

Per agent: score with its interval, the outcome counts (only outcomes some agent has, abbreviated),
and for the validity suite's agents how many tasks keep the agent within its gate. Below: what the
abbreviations mean, the tasks that fail a gate, and where the full numbers are.
"""

from __future__ import annotations

from stages.params import ValidityParams
from stages.report.formatting import MISSING, ci_label, fmt_interval, fmt_number
from stages.report.inputs import AgentMetrics, ValidityReport
from stages.report.tables import OUTCOMES, ranked_agents, task_failures

WIDTH = 80
ABBREVIATIONS = {"answered": "ok", "no_output": "none", "unparseable": "unp", "exec_error": "err",
                 "timeout": "time", "unrealistic": "unrl", "infra_error": "infr"}


def agent_gates(validity: ValidityReport, roles: ValidityParams) -> dict[str, str]:
    """Per validity agent: tasks within its gate, of all, and the bound (`5/5 >=99`).

    The bounds are the validity stage's: the oracle needs at least `oracle_min`; a floor or a
    reference-model agent may score at most `floor_max` / `reference_max` (a missing score is 0).
    """
    gates = validity.gates
    bounds = {roles.oracle: (">=", gates.oracle_min)}
    bounds |= {agent: ("<=", gates.floor_max) for agent in roles.floors}
    bounds |= {agent: ("<=", gates.reference_max) for agent in roles.references}
    found = {}
    for agent, (op, bound) in bounds.items():
        scores = [entry.scores.get(agent) for entry in validity.tasks.values()]
        held = sum((s is not None and s >= bound) if op == ">=" else (s or 0.0) <= bound for s in scores)
        found[agent] = f"{held}/{len(scores)} {op}{bound:g}"
    return found


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _ascii(text: str) -> str:
    return text.replace(MISSING, "-")


def _fit(text: str, width: int) -> str:
    """`text` cut to `width` in its middle (`~`): agent names of one family differ at either end."""
    if len(text) <= width:
        return text
    head = width // 2
    return text[:head] + "~" + text[len(text) - (width - head - 1):]


def score_cell(metrics: AgentMetrics) -> str:
    """`62.4 [55.1, 69.8]` (the estimate right-aligned in 5 characters), `-` when unscored."""
    bounds = fmt_interval(metrics.score_ci) if metrics.score is not None else ""
    return _ascii(f"{fmt_number(metrics.score):>5} {bounds}".rstrip())


def summary_text(metrics: dict[str, AgentMetrics], validity: ValidityReport, gates: dict[str, str],
                 width: int = WIDTH) -> str:
    """The summary as lines of at most `width` characters."""
    agents = ranked_agents(metrics)
    shown = [o for o in OUTCOMES if o == "answered" or any(metrics[a].outcomes.get(o) for a in agents)]
    counts = {o: [str(metrics[a].outcomes.get(o, 0)) for a in agents] for o in shown}
    widths = {o: max(len(ABBREVIATIONS[o]), *map(len, counts[o])) for o in shown}
    scores = [score_cell(metrics[a]) for a in agents]
    score_head = f"score [{ci_label([metrics[a].score_ci for a in agents])}]"
    score_width = max(len(score_head), *map(len, scores))
    gate_width = max([len("gate"), *map(len, gates.values())])
    rest = 2 + score_width + sum(w + 1 for w in widths.values()) + 2 + gate_width
    name_width = max(8, min(max(map(len, agents)), width - rest))

    def line(name: str, score: str, outcomes: list[str], gate: str) -> str:
        cells = " ".join(c.rjust(widths[o]) for o, c in zip(shown, outcomes, strict=True))
        return f"{_fit(name, name_width):<{name_width}}  {score:<{score_width}} {cells}  {gate}".rstrip()

    first = metrics[agents[0]]
    lines = [f"scibench on the {first.split} split: {_count(len(agents), 'agent')}, {_count(first.n_tasks, 'task')}, "
             f"{_count(first.n_queries, 'query', 'queries')} per agent"[:width],
             line("agent", score_head, [ABBREVIATIONS[o] for o in shown], "gate")]
    lines += [line(a, s, [counts[o][i] for o in shown], gates.get(a, "-"))
              for i, (a, s) in enumerate(zip(agents, scores, strict=True))]
    lines += _wrap("outcomes: " + ", ".join(f"{ABBREVIATIONS[o]} = {o}" for o in shown), width)
    failed = [t for t in validity.tasks if task_failures(validity, t)]
    lines.append(f"validity: {len(validity.tasks) - len(failed)}/{len(validity.tasks)} tasks pass every gate"
                 + ("" if not failed else f"; FAILED: {len(validity.failures)} gate(s)"))
    lines += [f"  {failure}"[:width] for failure in validity.failures]
    lines += ["report: processed/reports/index.html; all numbers: dvc metrics show",
              "compare with a commit or tag: dvc metrics diff <rev>"]
    return "\n".join(lines)


def _wrap(text: str, width: int) -> list[str]:
    """Break a comma-separated line at commas so each piece fits `width`."""
    lines, current = [], ""
    for piece in text.split(", "):
        candidate = f"{current}, {piece}" if current else piece
        if len(candidate) > width and current:
            lines.append(current + ",")
            candidate = "  " + piece
        current = candidate
    return [*lines, current]
