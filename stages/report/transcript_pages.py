"""Transcripts as static HTML pages beside the report, one per query: read them in any browser.

Files, under `processed/reports/transcripts/`:

    <agent>.html              a row per query (sorted by task, then query id): outcome, reward, q,
                              tokens, wall time, agent limit, and a link to the query's page
    <agent>/<query_id>.html   the query's grading and usage, its prompt, every event of its transcript
                              in order (stages/evaluation/transcript.py) and the files handed in

The `inspect` stage writes them from the same loaded runs as the Inspect log (`AgentRuns`). A
transcript is the agent's own output, hostile as any: every string is escaped and the pages carry
no script. Agent names and query ids become file names, so they must match `SAFE_NAME`. The same
runs give the same bytes: no time is written.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterable
from html import escape
from pathlib import Path

import pandas as pd

from stages.evaluation.journal import JournalRecord
from stages.evaluation.transcript import CodeRun, ModelTurn, ProgramRun, Stop, Transcript
from stages.report.agent_runs import AgentRuns, run_name
from stages.report.formatting import MISSING, fmt_count, fmt_number, fmt_usd
from stages.report.html import render_document, render_table
from stages.report.tables import Table

FOLDER = "transcripts"  # beside the report's index.html
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")  # whole name; no leading dot, so never `..`
CSS = """
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f8fa; border: 1px solid #e3e6ea;
      padding: 6px 8px; margin: 2px 0 10px; font-size: 13px; max-height: 520px; overflow-y: auto; }
ol.events > li { margin: 0 0 22px; } ol.events h3 { font-size: 15px; margin: 8px 0 4px; }
.label { color: #555; font-size: 13px; margin: 6px 0 0; }
"""
INDEX_COLUMNS = ("query", "task", "outcome", "reward", "q", "tokens", "wall (s)", "agent limit")


class UnsafeNameError(ValueError):
    """An agent name or a query id that cannot name a file."""


def checked_name(name: str, what: str) -> str:
    """`name` when it can name a file (`SAFE_NAME`), else `UnsafeNameError` naming `what` it is."""
    if not isinstance(name, str) or SAFE_NAME.fullmatch(name) is None:
        raise UnsafeNameError(f"{what} {name!r} cannot name a file: it must match {SAFE_NAME.pattern}")
    return name


def transcript_links(agents: Iterable[str], reports_dir: Path) -> dict[str, str]:
    """Agent -> the href of its transcript index from the report's page, for the agents whose index exists.

    A name that cannot name a file has no pages (`write_pages` refuses it), so no link: it is not
    looked up on disk.
    """
    return {agent: f"{FOLDER}/{agent}.html" for agent in agents
            if SAFE_NAME.fullmatch(agent) and (reports_dir / FOLDER / f"{agent}.html").is_file()}


def write_pages(runs: AgentRuns, folder: Path) -> Path:
    """Write the agent's index page and one page per query into `folder` (its old pages removed).

    Raises:
        UnsafeNameError: The agent's name or a query id cannot name a file (checked before writing).
    """
    agent = checked_name(runs.agent, "agent")
    rows = sorted_rows(runs.scores)
    for row in rows:
        checked_name(row["query_id"], "query id")
    pages = folder / agent
    shutil.rmtree(pages, ignore_errors=True)
    pages.mkdir(parents=True)
    for row in rows:
        (pages / f"{row['run']}.html").write_text(query_page(runs, row), encoding="utf-8")
    index = folder / f"{agent}.html"
    index.write_text(index_page(runs, rows), encoding="utf-8")
    return index


def sorted_rows(scores: pd.DataFrame) -> list[dict]:
    """The per-run score rows by task, query id, then epoch, each with its `run` name; NaN as None."""
    ordered = scores.sort_values(["task_id", "query_id", "epoch"], kind="stable")
    return [{key: None if _missing(value) else value for key, value in row.items()}
            | {"run": run_name(row["query_id"], int(row["epoch"]))} for row in ordered.to_dict("records")]


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value)  # NaN


def index_page(runs: AgentRuns, rows: list[dict]) -> str:
    """The agent's queries, each linked to its page."""
    table = Table("queries", f"Queries of {runs.agent}", "Sorted by task, then query id; reward 0-1, q: the "
                  "share of checks passed; a query's page holds its transcript.", INDEX_COLUMNS,
                  tuple((_run_title(row), row["task_id"], row["outcome"], fmt_number(row["reward"], 3),
                         fmt_number(row["q"], 3), fmt_count(row.get("tokens")), fmt_number(row.get("wall_seconds"), 2),
                         row.get("agent_limit") or MISSING) for row in rows),
                  links=tuple(f"{runs.agent}/{row['run']}.html" for row in rows))
    return render_document(f"Transcripts of {runs.agent}", [
        f"<header><h1>Transcripts of {escape(runs.agent)}</h1>",
        f'<p class="meta">model {escape(runs.model or MISSING)}; queries: {len(rows)}; '
        '<a href="../index.html">the report</a></p></header>',
        render_table(table)], CSS)


def _run_title(row: dict) -> str:
    return f"{row['query_id']}, epoch {row['epoch']}" if row["epoch"] else row["query_id"]


def query_page(runs: AgentRuns, row: dict) -> str:
    """One query: grading and usage, prompt, the transcript's events, the files handed in."""
    query_id, agent = row["query_id"], runs.agent
    record, transcript = runs.records.get(row["run"]), runs.transcripts.get(row["run"])
    title = _run_title(row)
    parts = [f"<header><h1>{escape(agent)}: {escape(title)}</h1>",
             f'<p class="meta">task {escape(row["task_id"])}; model {escape(runs.model or MISSING)}; '
             f'<a href="../{escape(agent)}.html">all queries of {escape(agent)}</a>; '
             '<a href="../../index.html">the report</a></p></header>',
             '<section id="grading"><h2>Grading</h2>', render_table(grading_table(row)),
             render_table(usage_table(record)), "</section>",
             f'<section id="prompt"><h2>Prompt</h2>{_pre(runs.prompts[query_id])}</section>',
             '<section id="events"><h2>Transcript</h2>']
    if transcript is None:
        parts.append(f'<p class="note">No transcript: {escape(missing_reason(record))}</p></section>')
    else:
        events = [f'<li id="event-{n}">{RENDERERS[type(event)](event)}</li>'
                  for n, event in enumerate(transcript.events, start=1)]
        parts += ['<ol class="events">', *events, "</ol></section>",
                  f'<section id="handed-in"><h2>Handed in</h2>{render_table(handed_in_table(transcript))}</section>']
    return render_document(f"{agent}: {title}", parts, CSS)


def missing_reason(record: JournalRecord | None) -> str:
    """Why a query has no transcript."""
    if record is None:
        return "the journal holds no record of this query under the agent's current configuration."
    if record.reused_from is not None:
        return f"its hand-in was reused from {record.reused_from}: nothing ran, so nothing was recorded."
    return ("its record names none: the agent keeps no transcript (it sees private files, as the oracle "
            "does), or the record predates transcripts.")


def grading_table(row: dict) -> Table:
    """The query's score as the score stage wrote it."""
    return Table("grading", "Score", "Reward 0-1; q: the share of checks passed; the agent limit is the bound "
                 "the agent stopped at.", ("outcome", "q", "reward", "agent limit", "tokens", "cost (USD)", "wall (s)"),
                 ((row["outcome"], fmt_number(row["q"], 3), fmt_number(row["reward"], 3),
                   row.get("agent_limit") or MISSING, fmt_count(row.get("tokens")), fmt_usd(row.get("cost_usd")),
                   fmt_number(row.get("wall_seconds"), 2)),))


def usage_table(record: JournalRecord | None) -> Table:
    """The record's model usage totals (no rows: no record, or an agent whose calls are not proxied)."""
    total = record.usage.total if record is not None and record.usage is not None else None
    rows = () if total is None else ((fmt_count(total.calls), fmt_count(total.prompt_tokens),
                                      fmt_count(total.completion_tokens), fmt_count(total.cached_tokens),
                                      fmt_count(total.reasoning_tokens), fmt_usd(total.cost_usd),
                                      fmt_number(total.seconds, 3)),)
    return Table("usage", "Model usage", "The journal record's totals over the model calls of the scored "
                 "attempt; seconds: summed call latency.", ("calls", "prompt tokens", "completion tokens",
                                                            "cached tokens", "reasoning tokens", "cost (USD)",
                                                            "seconds"), rows)


def handed_in_table(transcript: Transcript) -> Table:
    """The files the attempt handed in, by the sha256 of their bytes."""
    return Table("handed-in-files", "Files handed in", "A file's sha256 names its bytes under the agent's "
                 "artifacts; not taken: the file was there but not taken.", ("file", "sha256"),
                 tuple((name, sha or "not taken") for name, sha in sorted(transcript.handed_in.items())))


def _text(value: object) -> str:
    """A message field as text: a string as it is, anything else as JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)


def _pre(text: object, label: str | None = None) -> str:
    """`text` as preformatted text under its label; an empty text as the label alone, `<label>: empty`."""
    text = _text(text)
    if label is None:
        return f"<pre>{escape(text)}</pre>"
    if not text:
        return f'<p class="label">{escape(label)}: empty</p>'
    return f'<p class="label">{escape(label)}</p><pre>{escape(text)}</pre>'


def _facts(*facts: str) -> str:
    return f'<p class="meta">{escape("; ".join(facts))}</p>'


def _tool_calls(calls: list, whose: str) -> list[str]:
    """Each call's name and id, and each of its arguments (a string as it is, so that code reads as code)."""
    parts = []
    for call in calls:
        call = call if isinstance(call, dict) else {"function": {"arguments": _text(call)}}
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        name = f"{whose} tool call {_text(function.get('name')) or '?'} ({_text(call.get('id')) or 'no id'})"
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except (TypeError, ValueError):
            arguments = None
        if isinstance(arguments, dict) and arguments:
            parts += [_pre(value, f"{name}: {key}") for key, value in arguments.items()]
        else:
            parts.append(_pre(function.get("arguments"), f"{name}: arguments"))
    return parts


def _model_turn(turn: ModelTurn) -> str:
    parts = [f"<h3>Model call ({escape(turn.role)})</h3>"]
    for message in turn.sent:
        role = _text(message.get("role")) or "?"
        answered = f", the result of {_text(message.get('tool_call_id'))}" if message.get("tool_call_id") else ""
        parts.append(_pre(message.get("content"), f"sent: {role}{answered}"))
        parts += _tool_calls(message.get("tool_calls") or [], f"sent: {role}'s")
    parts += [_pre(turn.reply, "reply"), *_tool_calls(turn.tool_calls, "reply's"),
              _facts(f"finish reason {turn.finish_reason or MISSING}")]
    if turn.error is not None:
        parts.append(_pre(turn.error, "error (the call ended the loop)"))
    return "\n".join(parts)


def _code_run(run: CodeRun) -> str:
    return "\n".join([
        "<h3>Code run</h3>",
        _facts(f"exit {MISSING if run.exit_code is None else run.exit_code}", f"{run.seconds:g} s",
               f"limits hit: {', '.join(run.limits_hit) or 'none'}",
               "kernel restarted" if run.restarted else "kernel not restarted"),
        _pre(run.code, "code"), _pre(run.stdout, "stdout"), _pre(run.stderr, "stderr")])


def _stop(stop: Stop) -> str:
    return f"<h3>Stop: {escape(stop.reason)}</h3>" + (_pre(stop.detail, "detail") if stop.detail else "")


def _program_run(run: ProgramRun) -> str:
    return "\n".join([
        "<h3>Program run</h3>",
        _facts(f"exit {MISSING if run.exit_code is None else run.exit_code}", f"{run.seconds:g} s",
               f"limits hit: {', '.join(run.limits_hit) or 'none'}"),
        _pre(run.stdout, "stdout (tail)"), _pre(run.stderr, "stderr (tail)")])


RENDERERS = {ModelTurn: _model_turn, CodeRun: _code_run, Stop: _stop, ProgramRun: _program_run}
