"""Evaluation: running agents on a split's queries (`flows/evaluate.py` drives these).

`harness` lists the pending queries and runs one query with infra retries and artifact keeping;
`runner` runs a program in a fresh workspace in the sandbox; `journal` is the append-only,
crash-safe record of finished queries; `agents/` turns each agent kind (built-ins, command,
heuristic, llm) into the program to run, and `agents/identity` sets an agent up (its journal key).
The built benchmark's splits and task specs are read through `stages.built_benchmark`.
"""
