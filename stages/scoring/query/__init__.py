"""One hand-in -> one score: truth, untrusted artifacts, recomputed metrics, outcome, checks, score.

`truth` withholds what the agent must predict (`profiles`, `signatures`: the feature spaces a
partition is graded in); `confined` and `artifacts` read the agent's artifact as untrusted input;
`metrics` holds the formulas, `entities` applies them per entity, `grade` and `recompute` compute
the task's metrics from the artifact against the truth; `references` grades the reference models at
build time and reads what it recorded; `outcomes` parses the answer, `checks` holds the checks and
`scorer` turns them into the query's pass rate and reward; `attribution` compares a failed run's
checkpoints with the annotator's; `reasonableness` is the MR judge's prompt, request and parse for
one hand-in; `hand_ins` scores every hand-in of a split from the agent's journal records.
"""
