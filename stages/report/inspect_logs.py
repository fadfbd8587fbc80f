"""Transcripts as Inspect eval logs: one log per agent and split, opened with `inspect view`.

Files: `processed/reports/inspect/2000-01-01T00-00-00_scibench_<agent>.json`.

Each query is a sample: its prompt as the input, the conversation rebuilt from the transcript
(stages/evaluation/transcript.py) as its messages, scibench's score of the query as its score
(the reward as the value, the hand-in as the answer, the outcome and the pass share q as the
explanation and metadata), the record's usage as metadata. The target is left empty: the gold
never leaves the private files. `created` is a constant, not a time, so the same runs give the
same log bytes (it orders logs in `inspect view`, nothing else).

    inspect view --log-dir processed/reports/inspect

The stage loads each agent's runs once (stages/report/agent_runs.py) and writes from them both its
Inspect log and its HTML transcript pages (stages/report/transcript_pages.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalResults, EvalSample, EvalSpec, write_eval_log
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
from inspect_ai.scorer import Score
from inspect_ai.tool import ToolCall

from stages.built_benchmark import load_split
from stages.evaluation.transcript import ModelTurn, ProgramRun, Transcript
from stages.layout import BENCHMARK, REPORTS, RUNS, SCORES
from stages.params import load_params
from stages.report.agent_runs import AgentRuns, load_agent_runs, run_name
from stages.report.transcript_pages import FOLDER, checked_name, write_pages
from stages.skipped import skipped_reason

CREATED = "2000-01-01T00:00:00+00:00"  # not a time: the log's bytes follow from the runs alone
# `inspect view` lists a JSON log only when its name starts with an ISO time (inspect_ai's
# `log_file_pattern`): the same constant, then the agent.
FILE_PREFIX = "2000-01-01T00-00-00_scibench"
MESSAGES = {"system": ChatMessageSystem, "user": ChatMessageUser}


def conversation(prompt: str, transcript: Transcript | None) -> list[ChatMessage]:
    """The sample's messages: what each model call added, its reply and tool calls, in order."""
    if transcript is None:
        return [ChatMessageUser(content=prompt)]
    messages: list[ChatMessage] = []
    for event in transcript.events:
        if isinstance(event, ModelTurn):
            messages += [message for sent in event.sent if (message := _message(sent)) is not None]
            calls = [ToolCall(id=call["id"], function=call["function"]["name"], type="function",
                              arguments=_arguments(call["function"]["arguments"])) for call in event.tool_calls]
            if event.error is None:
                messages.append(ChatMessageAssistant(content=event.reply, tool_calls=calls or None))
        elif isinstance(event, ProgramRun):
            messages += [ChatMessageUser(content=prompt), ChatMessageAssistant(content=(
                f"(the program ran in its sandbox: exit {event.exit_code}, {event.seconds} s)\n"
                f"stdout:\n{event.stdout}\nstderr:\n{event.stderr}"))]
    return messages or [ChatMessageUser(content=prompt)]


def _message(sent: dict) -> ChatMessage | None:
    content = sent.get("content") or ""
    if sent.get("role") == "tool":
        return ChatMessageTool(content=content, tool_call_id=sent.get("tool_call_id"))
    kind = MESSAGES.get(sent.get("role"))
    return kind(content=content) if kind is not None else None  # an assistant's: its reply, added with it


def _arguments(text: str) -> dict:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {"unparsed": text}
    return value if isinstance(value, dict) else {"value": value}


def eval_log(runs: AgentRuns, split: str) -> EvalLog:
    """The log of one agent on one split."""
    samples = []
    for row in runs.scores.sort_values(["query_id", "epoch"]).itertuples():
        run = run_name(row.query_id, row.epoch)
        record = runs.records.get(run)
        prompt = runs.prompts[row.query_id]
        usage = record.usage.total.model_dump(mode="json") if record is not None and record.usage else None
        samples.append(EvalSample(
            id=row.query_id, epoch=int(row.epoch) + 1, input=prompt, target="",
            messages=conversation(prompt, runs.transcripts.get(run)),
            scores={"scibench": Score(value=float(row.reward),
                                      answer=record.answer_text if record is not None else None,
                                      explanation=f"{row.outcome}; q = {row.q}",
                                      metadata={"outcome": row.outcome, "q": float(row.q)})},
            metadata={"task_id": row.task_id, "agent_limit": row.agent_limit, "usage": usage,
                      "transcript_sha256": record.transcript_sha256 if record is not None else None}))
    epochs = int(runs.scores["epoch"].max()) + 1 if len(runs.scores) else 1
    spec = EvalSpec(created=CREATED, task=f"scibench/{split}", dataset=EvalDataset(name=split, samples=len(samples)),
                    model=f"scibench/{runs.model or runs.agent}", config=EvalConfig(epochs=epochs),
                    metadata={"agent": runs.agent})
    return EvalLog(eval=spec, status="success", results=EvalResults(total_samples=len(samples),
                                                                    completed_samples=len(samples)),
                   samples=samples)


def write_log(log: EvalLog, folder: Path, agent: str) -> Path:
    """Write the log as JSON (deterministic bytes, which the `.eval` zip's are not): `<FILE_PREFIX>_<agent>.json`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{FILE_PREFIX}_{checked_name(agent, 'agent')}.json"
    write_eval_log(log, path, format="json")
    return path


def main() -> None:
    """DVC entry point `inspect`: every evaluated agent's and system's log and transcript pages (but the oracle's)."""
    params = load_params()
    split = params.evaluate.split
    queries = load_split(BENCHMARK, split)
    pages, logs = REPORTS / FOLDER, REPORTS / "inspect"
    for folder in (pages, logs):  # an agent no longer evaluated leaves no pages or log behind
        shutil.rmtree(folder, ignore_errors=True)
    # and the systems of ST-Bench's protocol that ran here (stages/optimize/protocol.py)
    systems = [run for run in params.optimize.runs if skipped_reason(RUNS / run) is None]
    for agent in [*params.evaluate.agents, *systems]:
        if params.agents[agent].kind == "oracle":  # its script reads the private files: no transcript, no log
            continue
        runs = load_agent_runs(agent, params.agents[agent], queries, RUNS, SCORES, params.evaluate)
        print(f"inspect: {write_log(eval_log(runs, split), logs, agent)}")
        print(f"inspect: {write_pages(runs, pages)}")
    print(f"inspect: open the logs with `inspect view --log-dir {logs}`, "
          f"the pages from {pages}/<agent>.html")


if __name__ == "__main__":
    main()
