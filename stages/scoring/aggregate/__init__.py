"""Many query scores -> one number: task and system scores, intervals, cuts, comparisons, validity.

`summary` turns query scores into task scores and the system summary (ST-Bench); `intervals`
bootstraps them; `suite` adds the cuts, usage, infra counts, error attribution, honesty and MR;
`comparison` sets every agent against a baseline; `golds`, `gates` and `validity_report` are the
validity suite (is each task passed only by doing the analysis?).
"""
