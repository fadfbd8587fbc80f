"""The scripted OpenAI-compatible server for tests of LLM agents (it lives in stages/agents/llm/scripted.py)."""

from stages.agents.llm.scripted import DEFAULT, Request, ScriptedLLM, Turn, completion, usage

__all__ = ["DEFAULT", "Request", "ScriptedLLM", "Turn", "completion", "usage"]
