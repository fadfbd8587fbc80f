"""The scripted OpenAI-compatible server for tests of LLM agents.

It lives in stages/evaluation/agents/llm/scripted.py (the bench uses it too).
"""

from stages.evaluation.agents.llm.scripted import DEFAULT, Request, ScriptedLLM, Turn, completion, usage

__all__ = ["DEFAULT", "Request", "ScriptedLLM", "Turn", "completion", "usage"]
