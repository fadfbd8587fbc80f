"""The LLM agent loop, run inside the query's sandbox as `python -m agent`.

This folder alone is bound at /agent and `/` is on PYTHONPATH, so its modules import each other
relatively. Standard library only: the loop starts in every query's sandbox, where importing an
SDK would cost more than the sandbox itself. The model is reached through the harness's
proxy on the Unix socket `$SCIBENCH_LLM_SOCKET`; the options come as JSON in `$SCIBENCH_LLM_CONFIG`.
"""
