"""Many query scores -> one number: task and system scores, intervals, cuts, comparisons, validity.

`summary` turns query scores into task scores and the system summary (ST-Bench); `intervals`
bootstraps them; `suite` adds the cuts, usage, infra counts and error attribution; `comparison`
sets every agent against a baseline.
"""
