"""DVC entry point `judge@<agent>`: the optional modeling-reasonableness judge over an agent's hand-ins.

With params.yaml `judge.model` unset (the default) nothing is called and the verdict file stays as
it is (created empty), so `score@<agent>` reports no MR. With a model, every journal record of the
split with an answer is judged once: verdicts are appended to
`processed/judgements/<agent>.jsonl` keyed by the judge's identity (model and generation settings,
not the endpoint) and the record, so a rerun judges only what is new or failed at the endpoint.
See `stages.scoring.query.reasonableness` for what the judge sees and how its replies become outcomes.
"""

from __future__ import annotations

import argparse
import json
import os
from concurrent.futures import ThreadPoolExecutor

import httpx

from stages.evaluation.agents.llm.upstream import Endpoint, send
from stages.evaluation.harness import load_split, setup_agent
from stages.evaluation.journal import Journal, JournalRecord, record_key
from stages.layout import BENCHMARK, JUDGEMENTS, RUNS, journal_path
from stages.params import JudgeParams, load_params
from stages.scoring.query.reasonableness import (
    JudgeIdentity,
    Verdict,
    judge_messages,
    load_verdicts,
    parse_stage,
    parse_verdict,
)


def endpoint(settings: JudgeParams) -> Endpoint:
    """Where the judge's requests go, with the key read from `judge.api_key_env`."""
    key = os.environ.get(settings.api_key_env) if settings.api_key_env else None
    if settings.api_key_env and not key:
        raise RuntimeError(f"judge: the environment variable {settings.api_key_env} (judge.api_key_env) is not set")
    return Endpoint(url=settings.base_url.rstrip("/") + "/chat/completions", api_key=key,
                    timeout_s=settings.timeout_s, max_retries=settings.max_retries, backoff_s=2.0,
                    backoff_max_s=60.0)


def judge_one(client: httpx.Client, target: Endpoint, judge: JudgeIdentity, prompt: str,
              record: JournalRecord) -> Verdict:
    """Ask the judge about one record; the reply becomes one of the three outcomes."""
    request = {"model": judge.model, "messages": judge_messages(prompt, record), "temperature": judge.temperature,
               "max_tokens": judge.max_tokens}
    if judge.seed is not None:
        request["seed"] = judge.seed
    reply = send(client, target, request)
    base = {"key": judge.verdict_key(record), "record_key": record.key, "query_id": record.query_id}
    if reply.infra_error is not None or reply.status != 200 or not reply.body:
        return Verdict(**base, outcome="judge_infra_error", error=reply.infra_error or f"HTTP {reply.status}")
    try:
        raw = reply.body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raw = None
    usage = reply.body.get("usage") or {}
    score = parse_verdict(raw)
    return Verdict(**base, outcome="judged" if score is not None else "judge_unparseable", score=score,
                   stage=parse_stage(raw), raw=raw,
                   model_reported=reply.body.get("model"), prompt_tokens=usage.get("prompt_tokens"),
                   completion_tokens=usage.get("completion_tokens"))


def main() -> None:
    """Judge one agent's hand-ins on the evaluated split."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("agent")
    args = parser.parse_args()
    params = load_params()
    path = JUDGEMENTS / f"{args.agent}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    settings = params.judge
    if settings.model is None:
        print(f"judge@{args.agent}: no judge configured (judge.model); MR is not reported")
        return
    agent = setup_agent(args.agent, params.agents[args.agent], prices=params.prices)
    queries = load_split(BENCHMARK, params.evaluate.split)
    records = Journal(journal_path(RUNS, args.agent)).latest()
    judge, done = JudgeIdentity.of(settings), load_verdicts(path)
    todo = []
    for row in queries.itertuples():
        record = records.get(record_key(row.task_hash, row.query_id, agent.agent_hash, agent.model))
        if record is None or record.answer_text is None:
            continue
        verdict = done.get(judge.verdict_key(record))
        if verdict is None or verdict.outcome == "judge_infra_error":
            todo.append((row.prompt, record))
    target = endpoint(settings)
    with httpx.Client() as client, ThreadPoolExecutor(settings.concurrency) as pool, open(path, "a") as out:
        for verdict in pool.map(lambda item: judge_one(client, target, judge, *item), todo):
            out.write(json.dumps(verdict.model_dump(mode="json"), ensure_ascii=True) + "\n")
            out.flush()
    print(f"judge@{args.agent}: judged {len(todo)} hand-ins with {settings.model}")


if __name__ == "__main__":
    main()
