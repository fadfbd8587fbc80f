"""Multi-agent-system generation on the query pools (ST-Bench's protocol).

Workflows are optimised on a task's (or a category's) train and val queries and judged on the
held-out test queries.

`reward.py` is the training reward every method optimises, for the built-in methods and, as a
function and a command, for outside ones.
"""
