"""The LLM agent loop, run inside the query's sandbox as `python -m agent`.

This folder alone is bound at /agent and `/` is on PYTHONPATH, so its modules import each other
relatively. Standard library, `openai` and `httpx` only. The model is reached through the harness's
proxy on the Unix socket `$SCIBENCH_LLM_SOCKET`; the options come as JSON in `$SCIBENCH_LLM_CONFIG`.
"""
