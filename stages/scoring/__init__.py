"""Scoring: from what an agent handed in to the numbers people compare, in one direction.

- `query/`: one hand-in -> one score. The hidden truth and the feature spaces it is graded in, the
  artifact read as untrusted input under bounds, the metrics recomputed against the truth, the
  outcome, the checks, the query's pass rate and reward, the checkpoint attribution and the MR
  judge's prompt and parse. Construction imports it too (staging withholds the truth, annotation
  scores the gold); it imports nothing of construction.
- `aggregate/`: many scores -> one number. Task and system scores, intervals, the suite's cuts, the
  comparison against a baseline and the validity gates. It reads `query/`, never the reverse.
- The DVC entry points `score`, `judge`, `compare` and `validity` (`python -m stages.scoring.<verb>`):
  a `main()` that reads params.yaml, calls the two packages and writes the outputs.
"""
