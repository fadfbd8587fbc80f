"""The report: its tables from hand-made inputs, the terminal summary, the stage, determinism, artifacts."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from scibench_testing.report import AGENTS, METRICS, ROLES, run_main, write_project

from stages.report.build import build_report, page_notes
from stages.report.contents import report_tables
from stages.report.epoch_tables import epoch_tables
from stages.report.formatting import fmt_estimate, fmt_number, fmt_percent
from stages.report.html import render_table
from stages.report.inputs import AgentMetrics, Epochs, Interval, MissingInputError, load_inputs
from stages.report.prefect import artifact_key, create_artifacts
from stages.report.summary import agent_gates, summary_text
from stages.report.tables import (
    cut_axes,
    cut_table,
    outcome_table,
    ranked_agents,
    score_table,
    task_table,
    usage_table,
    validity_table,
    versus_table,
)
from stages.report.transcript_pages import transcript_links


@pytest.fixture
def inputs(inputs_dirs):
    return load_inputs(AGENTS, *inputs_dirs)


# --- numbers as they read -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "interval", "signed", "text"),
    [
        (62.4, Interval(low=55.1, high=69.8), False, "62.4 [55.1, 69.8]"),
        (62.44, Interval(low=55.06, high=69.75), False, "62.4 [55.1, 69.8]"),
        (100.0, Interval(low=100.0, high=100.0), False, "100.0 [100.0, 100.0]"),
        (62.4, None, False, "62.4"),
        (62.4, Interval(low=None, high=69.8), False, "62.4"),
        (None, Interval(low=1.0, high=2.0), False, "—"),
        (22.4, Interval(low=-1.0, high=35.0), True, "+22.4 [-1.0, +35.0]"),
    ],
)
def test_an_estimate_reads_with_its_interval(value, interval, signed, text):
    assert fmt_estimate(value, interval, signed=signed) == text


def test_rates_read_as_percentages():
    assert [fmt_percent(r) for r in (0.833333, 1.0, 0.0, None)] == ["83.3 %", "100.0 %", "0.0 %", "—"]


# --- tables ---------------------------------------------------------------------------------------


def test_agents_rank_by_score_unscored_last_ties_by_name():
    base = METRICS["alpha"]
    metrics = {name: AgentMetrics.model_validate(base | {"agent": name, "score": score})
               for name, score in [("d", None), ("c", 50.0), ("b", 70.0), ("a", 50.0)]}
    assert ranked_agents(metrics) == ["b", "a", "c", "d"]


def test_score_table_ranks_agents_and_gives_intervals_and_rates(inputs):
    table = score_table(inputs.metrics)
    assert table.columns == ("agent", "score [95 % CI]", "tasks", "queries", "realistic rate",
                             "pass rate | realistic", "reward", "honesty", "exact match")
    assert table.rows == (
        ("beta", "80.0 [70.0, 90.0]", "2", "6", "100.0 %", "80.0 %", "0.500", "66.7 %", "33.3 %"),
        ("alpha", "62.4 [55.1, 69.8]", "2", "6", "83.3 %", "75.0 %", "0.500", "66.7 %", "33.3 %"),
        ("base", "40.0 [30.0, 50.0]", "2", "6", "100.0 %", "40.0 %", "0.500", "66.7 %", "33.3 %"),
        ("zero", "0.0 [0.0, 0.0]", "2", "6", "0.0 %", "—", "0.500", "66.7 %", "33.3 %"),
    )


def test_the_score_table_links_the_agents_whose_transcript_index_exists(inputs, tmp_path):
    (tmp_path / "transcripts").mkdir()
    (tmp_path / "transcripts" / "alpha.html").write_text("")
    links = transcript_links([*AGENTS, "../transcripts/alpha"], tmp_path)
    assert links == {"alpha": "transcripts/alpha.html"}
    table = score_table(inputs.metrics, links)
    assert table.links == (None, "transcripts/alpha.html", None, None)  # beta, alpha, base, zero
    assert re.findall(r"<tr><td>(.*?)</td>", render_table(table)) == [
        "beta", '<a href="transcripts/alpha.html">alpha</a>', "base", "zero"]
    assert report_tables(inputs, links)[0] == table and score_table(inputs.metrics).links is None


def test_the_report_links_the_transcript_indexes_beside_it(inputs, tmp_path, monkeypatch):
    linked = []
    monkeypatch.setattr("stages.report.build.build_sections",
                        lambda inputs, plots_dir, transcripts: linked.append(transcripts) or [])
    (tmp_path / "transcripts").mkdir()
    (tmp_path / "transcripts" / "base.html").write_text("")
    build_report(inputs, tmp_path)
    assert linked == [{"base": "transcripts/base.html"}]


def test_versus_table_orders_by_delta_perf_and_marks_the_frontier(inputs):
    table = versus_table(inputs.comparison)
    assert table.title == "Against the baseline base"
    assert table.rows == (
        ("beta", "50.0 %", "+40.0 [+25.0, +55.0]", "3.00×", "—", "20.00", "—", "yes"),
        ("alpha", "100.0 %", "+22.4 [+10.0, +35.0]", "0.50×", "—", "224.00", "—", "yes"),
        ("base", "0.0 %", "+0.0 [+0.0, +0.0]", "1.00×", "—", "0.00", "—", ""),
        ("zero", "0.0 %", "-40.0 [-50.0, -30.0]", "0.15×", "—", "-400.00", "—", "yes"),
    )


def test_outcome_table_counts_every_outcome_and_the_retries(inputs):
    table = outcome_table(inputs.metrics)
    assert table.columns[1:] == ("answered", "no_output", "unparseable", "exec_error", "timeout", "unrealistic",
                                 "infra_error", "total", "retried queries", "extra attempts")
    assert table.rows[1] == ("alpha", "5", "0", "0", "0", "1", "0", "0", "6", "1", "2")
    assert table.rows[3] == ("zero", "0", "0", "0", "1", "0", "5", "0", "6", "1", "2")


def test_cuts_show_the_filled_axes_in_order_and_name_the_empty_ones(inputs):
    assert cut_axes(inputs.metrics) == (["domain", "difficulty", "category", "cognitive_skill"],
                                        ["modality", "capability", "pipeline_stage", "mas_challenge"])
    table = cut_table(inputs.metrics, "difficulty")
    assert table.key == "cut-difficulty"
    assert table.columns == ("difficulty", "tasks", "beta", "alpha", "base", "zero")
    assert table.rows == (("easy", "1", "100.0 [95.0, 100.0]", "70.0 [65.0, 75.0]", "30.0 [25.0, 35.0]",
                           "0.0 [0.0, 5.0]"),
                          ("hard", "1", "60.0 [55.0, 65.0]", "54.8 [49.8, 59.8]", "50.0 [45.0, 55.0]",
                           "0.0 [0.0, 5.0]"))
    assert table.shades == ((None, None, 100.0, 70.0, 30.0, 0.0), (None, None, 60.0, 54.8, 50.0, 0.0))


def test_task_table_is_task_by_agent(inputs):
    table = task_table(inputs)
    assert table.columns == ("task", "beta", "alpha", "base", "zero")
    assert table.rows == (("t1", "100.0", "70.0", "30.0", "0.0"), ("t2", "60.0", "54.8", "50.0", "0.0"))


def test_validity_table_passes_and_fails_tasks_with_the_gates_named(inputs):
    table = validity_table(inputs.validity)
    assert table.columns == ("task", "beta", "zero", "base", "best constant", "gates", "failed gates")
    assert table.rows == (
        ("t1", "100.0", "0.0", "30.0", "—", "pass", ""),
        ("t2", "60.0", "0.0", "50.0", "25 %", "FAIL",
         "oracle scores 60.0, the gate needs >= 99; reference agent base scores 50.0, the gate allows <= 40"),
    )


def test_usage_table_sums_and_per_query_costs_with_unknown_cost_as_a_dash(inputs):
    rows = {row[0]: row for row in usage_table(inputs.metrics, inputs.comparison).rows}
    assert rows["alpha"] == ("alpha", "3,000", "2,250", "750", "—", "—", "—", "20.0", "20.0", "500", "—", "3.33",
                             "1.00", "max_turns 1", "12", "1", "m-2024")
    assert rows["base"][1:7] == ("—", "—", "—", "—", "—", "$0.0000")
    assert rows["base"][-3:] == ("0", "0", "—")


def test_score_table_adds_the_judges_mr_when_an_agent_was_judged(inputs):
    mr = {"model": "judge-1", "judged": 12, "judge_unparseable": 1, "judge_infra_error": 0, "mean": 3.4}
    judged = inputs.metrics | {"alpha": inputs.metrics["alpha"].model_validate(
        METRICS["alpha"] | {"modeling_reasonableness": mr})}
    table = score_table(judged)
    assert table.columns[-1] == "MR (1-5)"
    assert [row[-1] for row in table.rows] == ["—", "3.40 (12 judged)", "—", "—"]
    assert "MR (1-5)" not in score_table(inputs.metrics).columns


def test_every_table_key_is_a_prefect_artifact_key(inputs):
    keys = [artifact_key(table.key) for table in report_tables(inputs)]
    assert keys == ["scibench-scores", "scibench-versus-baseline", "scibench-outcomes", "scibench-errors",
                    "scibench-attribution", "scibench-cut-domain", "scibench-cut-difficulty", "scibench-cut-category",
                    "scibench-cut-cognitive-skill", "scibench-tasks", "scibench-validity", "scibench-honesty",
                    "scibench-usage"]
    with pytest.raises(ValueError, match="not a Prefect artifact key"):
        artifact_key("Per_Task")


def test_the_header_names_split_baseline_validity_and_version(inputs):
    meta, warnings, footer = page_notes(inputs)
    assert meta == ["4 agents on the test split; baseline base; 2 validity gate(s) FAILED.",
                    "Scored on benchmark b0, git v1.0, build lock l0."]
    assert warnings == []
    assert footer[0] == "benchmark b0, git v1.0, build lock l0: alpha, base, beta, zero"


def test_agents_scored_on_different_benchmarks_are_warned_about(inputs):
    other = inputs.metrics["zero"].model_copy(update={"version": {"benchmark_id": "b1", "git": "v2.0"}})
    mixed = dataclasses.replace(inputs, metrics=inputs.metrics | {"zero": other})
    meta, warnings, _ = page_notes(mixed)
    assert meta[1:] == ["Scored on benchmark b0, git v1.0, build lock l0.",
                        "Scored on benchmark b1, git v2.0, build lock ?."]
    assert warnings == ["The agents were scored on 2 different benchmarks (b0, b1): their scores do not compare."]


# --- missing inputs -------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "stage"), [("alpha.json", "score@alpha"), ("base.tasks.json", "score@base"),
                                             ("compare.json", "compare")])
def test_a_missing_input_names_the_file_and_the_stage(inputs_dirs, name, stage):
    metrics, reports = inputs_dirs
    (metrics / name).unlink()
    with pytest.raises(MissingInputError) as error:
        load_inputs(AGENTS, metrics, reports)
    assert str(error.value) == f"{metrics / name} is missing: run `dvc repro {stage}` first"


def test_the_stage_fails_on_an_agent_without_metrics(tmp_path):
    project = write_project(tmp_path)
    (project / "processed/metrics/zero.json").unlink()
    with pytest.raises(SystemExit) as stop:
        run_main(project)
    assert stop.value.code == "report: processed/metrics/zero.json is missing: run `dvc repro score@zero` first"
    assert not (project / "processed/reports/index.html").exists()


# --- the terminal summary -------------------------------------------------------------------------

SUMMARY = """\
scibench on the test split: 4 agents, 2 tasks, 6 queries per agent
agent     score [95 % CI]    ok err time unrl  gate
beta       80.0 [70.0, 90.0]  6   0    0    0  1/2 >=99
alpha      62.4 [55.1, 69.8]  5   0    1    0  -
base       40.0 [30.0, 50.0]  6   0    0    0  1/2 <=40
zero        0.0 [0.0, 0.0]    0   1    0    5  2/2 <=2
outcomes: ok = answered, err = exec_error, time = timeout, unrl = unrealistic
validity: 1/2 tasks pass every gate; FAILED: 2 gate(s)
  t2: oracle scores 60.0, the gate needs >= 99
  t2: reference agent base scores 50.0, the gate allows <= 40
report: processed/reports/index.html; all numbers: dvc metrics show
compare with a commit or tag: dvc metrics diff <rev>"""


def test_summary_is_one_line_per_agent_with_interval_outcomes_and_gate(inputs):
    assert agent_gates(inputs.validity, ROLES) == {"beta": "1/2 >=99", "zero": "2/2 <=2", "base": "1/2 <=40"}
    assert summary_text(inputs.metrics, inputs.validity, agent_gates(inputs.validity, ROLES)) == SUMMARY


def test_summary_fits_80_columns_with_long_names_and_every_outcome(inputs):
    counts = {"answered": 1200, "no_output": 3, "unparseable": 14, "exec_error": 100, "timeout": 9,
              "unrealistic": 55, "infra_error": 2}
    metrics = {f"{name}-with-a-very-long-configuration-name": AgentMetrics.model_validate(
        METRICS[name] | {"outcomes": counts, "score": 100.0, "score_ci": {"low": 100.0, "high": 100.0}})
        for name in AGENTS}
    gates = {name: "20/20 >=99" for name in metrics}
    lines = summary_text(metrics, inputs.validity, gates).splitlines()
    assert max(map(len, lines)) <= 80, "\n".join(lines)
    assert lines[1].split()[-8:] == ["ok", "none", "unp", "err", "time", "unrl", "infr", "gate"]
    assert lines[2] == "alpha-~n-name  100.0 [100.0, 100.0] 1200    3  14 100    9   55    2  20/20 >=99"


def test_the_stage_prints_the_summary(built):
    assert run_main(built["project"], "--summary") == SUMMARY + "\n"


# --- the stage: page, plots, determinism, Prefect ------------------------------------------------


def test_the_stage_writes_the_page_and_skips_prefect_without_an_api(built):
    assert built["printed"].splitlines() == [
        "report: processed/reports/index.html (4 agents)",
        "report: PREFECT_API_URL is not set, Prefect artifacts skipped (make ui starts a server)"]
    page = (built["reports"] / "index.html").read_text()
    images = re.findall(r'<img src="([^"]+)"', page)
    assert images == ["plots/scores.png", "plots/frontier.png", "plots/coverage.png", "plots/outcomes.png",
                      "plots/cut-domain.png", "plots/cut-difficulty.png", "plots/cut-category.png",
                      "plots/cut-cognitive-skill.png"]
    links = re.findall(r'<a href="(plots/[^"]+)"', page)
    assert links == [image.replace(".png", ".svg") for image in images]
    for name in images + links:
        assert (built["reports"] / name).stat().st_size > 1000, name
    # Shown at 100 CSS px per inch of figure: two thirds of the 150 dpi PNG's pixels.
    sizes = re.findall(r'<img src="([^"]+)" alt="[^"]*" width="(\d+)" height="(\d+)">', page)
    assert [name for name, _, _ in sizes] == images
    for name, width, height in sizes:
        png = (built["reports"] / name).read_bytes()
        assert (int(width), int(height)) == tuple(round(int.from_bytes(png[i:i + 4]) * 2 / 3) for i in (16, 20))
    assert sorted(p.name for p in (built["reports"] / "plots").iterdir()) == sorted(
        Path(name).name for name in images + links)
    # Offline: no script, no stylesheet or font from elsewhere, nothing but the files beside it.
    assert "<script" not in page and "http://" not in page and "https://" not in page and "<link" not in page
    assert '<td class="fail">FAIL</td>' in page
    assert "No task has a value on: modality, capability, pipeline_stage" in page


def test_two_builds_are_byte_identical_and_the_second_publishes_to_prefect(built, tmp_path, monkeypatch):
    published = []
    monkeypatch.setattr("stages.report.__main__.publish_tables",
                        lambda tables, summary, path: published.append((tables, summary, path)) or ["k"])
    project = write_project(tmp_path)
    printed = run_main(project, env={"PREFECT_API_URL": "http://127.0.0.1:9/api"})
    assert printed.splitlines()[-1] == "report: 1 Prefect artifacts published (k, ...)"
    [(tables, summary, path)] = published
    assert [t.key for t in tables][:2] == ["scores", "versus-baseline"] and summary == SUMMARY
    first, second = built["reports"], project / "processed/reports"
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    for name in files:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_create_artifacts_makes_a_table_artifact_per_table_and_the_summary(inputs, monkeypatch):
    import prefect.artifacts

    created = []
    monkeypatch.setattr(prefect.artifacts, "create_table_artifact", lambda **kw: created.append(("table", kw)))
    monkeypatch.setattr(prefect.artifacts, "create_markdown_artifact", lambda **kw: created.append(("md", kw)))
    tables = report_tables(inputs)
    keys = create_artifacts(tables, SUMMARY, Path("processed/reports/index.html"))
    assert keys == [kw["key"] for _, kw in created] and keys[-1] == "scibench-summary"
    kind, scores = created[0]
    assert kind == "table" and scores["key"] == "scibench-scores"
    assert scores["table"][0] == {"agent": "beta", "score [95 % CI]": "80.0 [70.0, 90.0]", "tasks": "2",
                                  "queries": "6", "realistic rate": "100.0 %", "pass rate | realistic": "80.0 %",
                                  "reward": "0.500", "honesty": "66.7 %", "exact match": "33.3 %"}
    kind, summary = created[-1]
    assert kind == "md" and summary["markdown"] == (
        f"```\n{SUMMARY}\n```\n\nThe full report: `processed/reports/index.html`\n")


def test_repeated_runs_get_their_spread_and_pass_at_k_tables_after_the_scores(inputs):
    assert epoch_tables(inputs) == []  # every agent ran once: no table
    beta = inputs.metrics["beta"].model_copy(update={"epochs": Epochs(n=3, scores=[70.0, 80.0, 90.0], se=5.773503,
                                                                      spread=20.0)})
    tasks = inputs.tasks["beta"].model_copy(update={"tasks": {
        **inputs.tasks["beta"].tasks,
        "t2": inputs.tasks["beta"].tasks["t2"].model_copy(update={"pass_at_k": {"1": 0.5, "2": 0.75, "3": 1.0}})}})
    repeated = dataclasses.replace(inputs, metrics={**inputs.metrics, "beta": beta},
                                   tasks={**inputs.tasks, "beta": tasks})
    spread, passes = epoch_tables(repeated)
    assert spread.columns == ("agent", "epochs", "score", "SE", "spread", "epoch 0", "epoch 1", "epoch 2")
    assert spread.rows == (("beta", "3", fmt_number(beta.score), "5.77", "20.0", "70.0", "80.0", "90.0"),)
    assert passes.columns == ("task", "agent", "pass@1", "pass@2", "pass@3")
    assert passes.rows == (("t2", "beta", "50.0 %", "75.0 %", "100.0 %"),)
    keys = [table.key for table in report_tables(repeated)]
    assert keys[:3] == ["scores", "repeated-runs", "pass-at-k"]
