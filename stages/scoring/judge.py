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
from concurrent.futures import ThreadPoolExecutor

import httpx

from stages.built_benchmark import load_split
from stages.evaluation.agents.identity import agent_epochs, setup_agent
from stages.evaluation.journal import Journal
from stages.layout import BENCHMARK, JUDGEMENTS, RUNS, journal_path
from stages.params import load_params
from stages.scoring.query.reasonableness import JudgeIdentity, endpoint, judge_one, load_verdicts, pending_hand_ins


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
    judge = JudgeIdentity.of(settings)
    todo = pending_hand_ins(queries, records, agent.agent_hash, agent.model, judge, load_verdicts(path),
                            agent_epochs(params.agents[args.agent], params.evaluate))
    target = endpoint(settings)
    with httpx.Client() as client, ThreadPoolExecutor(settings.concurrency) as pool, open(path, "a") as out:
        for verdict in pool.map(lambda item: judge_one(client, target, judge, *item), todo):
            out.write(json.dumps(verdict.model_dump(mode="json"), ensure_ascii=True) + "\n")
            out.flush()
    print(f"judge@{args.agent}: judged {len(todo)} hand-ins with {settings.model}")


if __name__ == "__main__":
    main()
