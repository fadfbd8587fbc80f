"""The report's plots, each written as `plots/<name>.png` and `.svg` with its title and caption."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, MultipleLocator, NullFormatter

from stages.report.figures import Plot, figure, save
from stages.report.formatting import ci_label, fmt_number
from stages.report.inputs import AgentMetrics, Comparison
from stages.report.labels import label_points
from stages.report.tables import OUTCOMES, axis_name, cut_key, ranked_agents

BAR = "#3b75af"
FRONTIER = "#d55e00"
DOMINATED = "#7f7f7f"
RATIO_TICKS = [(m, 10.0**e) for e in range(-4, 5) for m in (1, 2, 5)]  # ρ ticks: mantissa, decade
# Okabe-Ito colours, one per outcome (colour-blind safe).
OUTCOME_COLOURS = {"answered": "#009e73", "no_output": "#bbbbbb", "unparseable": "#e69f00",
                   "exec_error": "#d55e00", "timeout": "#cc79a7", "unrealistic": "#f0e442",
                   "infra_error": "#56b4e9"}


def _not_drawn(names: list[str], why: str) -> str:
    return f" Not drawn ({why}): {', '.join(names)}." if names else ""


def plot_scores(metrics: dict[str, AgentMetrics], plots_dir: Path, name: str = "scores") -> Plot:
    """Horizontal bars of the score per agent, best at the top, with the interval as error bars."""
    agents = [a for a in ranked_agents(metrics) if metrics[a].score is not None]
    label = ci_label([metrics[a].score_ci for a in agents])
    title = f"Score by agent ({label})"
    with figure(7.5, 0.9 + 0.36 * max(len(agents), 1)) as fig:
        ax = fig.add_subplot()
        y = np.arange(len(agents))[::-1]
        scores = np.array([metrics[a].score for a in agents], dtype=float)
        cis = [metrics[a].score_ci for a in agents]
        low = np.array([s - ci.low if ci and ci.low is not None else 0.0 for s, ci in zip(scores, cis, strict=True)])
        high = np.array([ci.high - s if ci and ci.high is not None else 0.0
                         for s, ci in zip(scores, cis, strict=True)])
        ax.barh(y, scores, color=BAR, height=0.6)
        ax.errorbar(scores, y, xerr=[np.maximum(low, 0), np.maximum(high, 0)], fmt="none", ecolor="black",
                    elinewidth=1, capsize=3)
        for yi, score, up in zip(y, scores, high, strict=True):
            ax.text(score + max(up, 0) + 1.5, yi, fmt_number(score), va="center", fontsize=9)
        ax.set_yticks(y, agents)
        ax.set_xlim(0, 112)
        ax.xaxis.set_major_locator(MultipleLocator(20))
        ax.set_xlabel("score (points, 0-100: mean task score)")
        ax.set_title(title)
        size = save(fig, plots_dir, name)
    unscored = [a for a in metrics if metrics[a].score is None]
    return Plot(name, title, "Longer bars score higher; the whiskers are the score's bootstrap "
                "interval over each task's queries, so agents whose whiskers overlap are not clearly "
                "apart (none is drawn when a task has a single query, as on the default profile)."
                + _not_drawn(sorted(unscored), "no scored task"), size)


def plot_frontier(comparison: Comparison, plots_dir: Path, name: str = "frontier") -> Plot:
    """Δperf against ρ_time per agent, the baseline at (1, 0), the Pareto frontier highlighted."""
    versus = comparison.versus_baseline
    drawn = sorted(a for a, v in versus.items() if v.rho_time and v.rho_time > 0 and v.delta_perf is not None
                   and a != comparison.baseline)
    title = f"Cost-performance against {comparison.baseline}"
    with figure(9.0, 5.0) as fig:
        ax = fig.add_subplot()
        fig.subplots_adjust(left=0.12, right=0.75, bottom=0.12, top=0.9)
        ax.axhline(0, color="#cccccc", lw=1, zorder=0)
        ax.axvline(1, color="#cccccc", lw=1, zorder=0)
        points = {a: (versus[a].rho_time, versus[a].delta_perf) for a in drawn} | {comparison.baseline: (1.0, 0.0)}
        frontier = sorted((a for a in points if a in comparison.frontier), key=lambda a: points[a])
        if frontier:
            ax.plot([points[a][0] for a in frontier], [points[a][1] for a in frontier],
                    color=FRONTIER, lw=1.2, zorder=1, label="Pareto frontier")
        for a in drawn:
            v, on = versus[a], a in comparison.frontier
            err = [[v.delta_perf - v.delta_ci.low], [v.delta_ci.high - v.delta_perf]] \
                if v.delta_ci and v.delta_ci.low is not None and v.delta_ci.high is not None else None
            ax.errorbar(v.rho_time, v.delta_perf, yerr=err, fmt="o", ms=7 if on else 5, capsize=2, elinewidth=0.8,
                        color=FRONTIER if on else DOMINATED, zorder=2)
        ax.plot([1], [0], marker="D", color="black", ms=6, ls="none", zorder=3,
                label=f"baseline ({comparison.baseline})")
        xs = [versus[a].rho_time for a in drawn] + [1.0]
        ys = [versus[a].delta_perf for a in drawn] + [0.0]
        ys += [v for a in drawn if versus[a].delta_ci for v in (versus[a].delta_ci.low, versus[a].delta_ci.high)
               if v is not None]
        ax.set_xscale("log")
        ax.set_xlim(min(xs) / 2.0, max(xs) * 2.0)
        pad = max(5.0, 0.12 * (max(ys) - min(ys)))
        ax.set_ylim(min(ys) - pad, max(ys) + pad)
        decades = np.log10(max(xs) / min(xs)) + np.log10(4.0)
        ax.xaxis.set_major_locator(FixedLocator([m * d for m, d in RATIO_TICKS if decades <= 2.5 or m == 1]))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}×"))
        ax.set_xlabel("ρ_time: mean per-query wall-time ratio to the baseline (×, log scale)")
        ax.set_ylabel("Δperf: mean task score − the baseline's (points)")
        ax.set_title(title)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
        whiskers = [(versus[a].rho_time, versus[a].delta_ci.low, versus[a].delta_ci.high) for a in drawn
                    if versus[a].delta_ci and None not in (versus[a].delta_ci.low, versus[a].delta_ci.high)]
        label_points(ax, [(x, y, f"{a} (baseline)" if a == comparison.baseline else a)
                          for a, (x, y) in points.items()], whiskers)
        size = save(fig, plots_dir, name)
    missing = sorted(set(versus) - set(drawn) - {comparison.baseline})
    return Plot(name, title, "Up is better, left is cheaper: agents on the orange line are on the "
                "Pareto frontier (no other agent is both faster and better); whiskers are Δperf's interval. "
                "Reference agents run in the harness process unless their options say `sandbox: true`: "
                "their times leave out the sandbox's and interpreter's start (about half a second per "
                "query; the default baseline, climatology, runs sandboxed for that reason)."
                + _not_drawn(missing, "no time ratio or Δperf"), size)


def plot_coverage(metrics: dict[str, AgentMetrics], plots_dir: Path, name: str = "coverage") -> Plot:
    """Realistic-output rate (coverage) against pass rate given a realistic output (quality)."""
    drawn = [a for a in sorted(metrics) if metrics[a].realistic_rate is not None
             and metrics[a].pass_rate_given_realistic is not None]
    title = "Coverage and quality"
    with figure(6.5, 5.0) as fig:
        ax = fig.add_subplot()
        fig.subplots_adjust(left=0.13, right=0.88, bottom=0.12, top=0.9)
        for level in (25, 50, 75):
            x = np.linspace(level, 100, 60)
            ax.plot(x, level * 100 / x, color="#cccccc", lw=0.8, ls="--", zorder=0)
            ax.text(101.5, level, f"{level} %", color="#888888", fontsize=8, va="center", clip_on=False)
        x = [100 * metrics[a].realistic_rate for a in drawn]
        y = [100 * metrics[a].pass_rate_given_realistic for a in drawn]
        ax.scatter(x, y, s=30, color=BAR, zorder=2)
        ax.set_xlim(-5, 105)
        ax.set_ylim(-5, 105)
        ax.set_xlabel("realistic-output rate (% of scored queries)")
        ax.set_ylabel("pass rate given a realistic output (%)")
        ax.set_title(title)
        label_points(ax, list(zip(x, y, drawn, strict=True)))
        size = save(fig, plots_dir, name)
    missing = sorted(set(metrics) - set(drawn))
    return Plot(name, title, "Right means more queries got a realistic answer, up means those answers "
                "passed more often; dashed curves mark equal products (coverage × quality, in %)."
                + _not_drawn(missing, "no realistic output"), size)


def plot_outcomes(metrics: dict[str, AgentMetrics], plots_dir: Path) -> Plot:
    """Stacked horizontal bars: each agent's queries by outcome."""
    agents = ranked_agents(metrics)
    title = "Outcomes by agent"
    with figure(8.0, 0.9 + 0.36 * len(agents)) as fig:
        ax = fig.add_subplot()
        y = np.arange(len(agents))[::-1]
        left = np.zeros(len(agents))
        most = max((sum(metrics[a].outcomes.values()) for a in agents), default=1) or 1
        for outcome in OUTCOMES:
            counts = np.array([metrics[a].outcomes.get(outcome, 0) for a in agents], dtype=float)
            ax.barh(y, counts, left=left, color=OUTCOME_COLOURS[outcome], height=0.6, label=outcome)
            for yi, start, count in zip(y, left, counts, strict=True):
                if count >= 0.06 * most:
                    ax.text(start + count / 2, yi, f"{count:.0f}", ha="center", va="center", fontsize=8,
                            color="white" if outcome in ("exec_error", "answered") else "black")
            left += counts
        ax.set_yticks(y, agents)
        ax.set_xlim(0, most * 1.02)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("queries (count)")
        ax.set_title(title)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
        size = save(fig, plots_dir, "outcomes")
    return Plot("outcomes", title, "Each bar is one agent's queries split by outcome; only green "
                "(answered) queries can pass, infra errors (blue) are retried and never scored.", size)


def plot_cut(metrics: dict[str, AgentMetrics], axis: str, plots_dir: Path) -> Plot:
    """A heat map of agents (rows, ranked) by the axis's values (columns), cells annotated."""
    agents = ranked_agents(metrics)
    values = sorted({v for a in agents for v in metrics[a].cuts.get(axis, {})})
    grid = np.full((len(agents), len(values)), np.nan)
    n_tasks = dict.fromkeys(values, 0)
    for i, a in enumerate(agents):
        for j, value in enumerate(values):
            cut = metrics[a].cuts.get(axis, {}).get(value)
            if cut is not None:
                n_tasks[value] = max(n_tasks[value], cut.n_tasks)
                grid[i, j] = np.nan if cut.score is None else cut.score
    name = axis_name(axis)
    title = f"Score by {name}"
    with figure(2.6 + 1.0 * len(values), 1.4 + 0.36 * len(agents)) as fig:
        ax = fig.add_subplot()
        image = ax.imshow(np.ma.masked_invalid(grid), cmap="Blues", vmin=0, vmax=100, aspect="auto")
        image.cmap.set_bad("#eeeeee")
        for i in range(len(agents)):
            for j in range(len(values)):
                score = grid[i, j]
                ax.text(j, i, "—" if np.isnan(score) else f"{score:.1f}", ha="center", va="center",
                        fontsize=8, color="white" if score > 60 else "black")
        rotate = max(map(len, values), default=0) > 10 or len(values) > 6
        ticks = [f"{v}{' ' if rotate else chr(10)}({n_tasks[v]} task{'s' * (n_tasks[v] != 1)})" for v in values]
        ax.set_xticks(range(len(values)), ticks,
                      rotation=30 if rotate else 0, ha="right" if rotate else "center", rotation_mode="anchor",
                      fontsize=8)
        ax.set_yticks(range(len(agents)), agents)
        ax.spines[:].set_visible(False)
        ax.set_xlabel(name)
        ax.set_title(title)
        fig.colorbar(image, ax=ax, label="score (points, 0-100)", fraction=0.05, pad=0.02)
        size = save(fig, plots_dir, cut_key(axis))
    return Plot(cut_key(axis), title, f"Each cell is one agent's score (0-100 points) on "
                f"the tasks of one {name}; darker is higher, grey cells have no scored task.", size)
