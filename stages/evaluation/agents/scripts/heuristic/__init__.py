"""A non-LLM data scientist: reads the prompt, profiles `data/`, fits the standard method of the task.

Run as `python /agent/heuristic_agent.py /workspace` (or `python -m heuristic` with this folder's
parent on the path). The method family comes from the prompt's artifact and answer blocks
(`prompt.py`), never from a task's name: `forecast` (a withheld later period: `forecast.py`),
`impute` (hidden days: `impute.py`), `partition` (one label per entity: `cluster.py`) and
`statistic` (a hypothesis: `statistic.py`).
Each writes the declared artifact and `work/answer.json` with metrics estimated on its own held-out
data (`handin.py`); a failing method falls back to a simpler one (`fallbacks.py`).
"""
