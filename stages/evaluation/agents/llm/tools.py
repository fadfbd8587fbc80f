"""The `tool_loop` operator: the model calls a `python` tool until it calls its finishing tool.

Each `python` call runs as the next cell of the query's kernel (stages/sandbox/kernel.py: state
persists as in a notebook) and its output, capped, goes back as the tool result. Malformed tool
arguments and unknown tools are told to the model, which goes on. A reply without a tool call gets
a prompt to continue. `submit` counts only when `work/answer.json` is a JSON object; otherwise the
model is told why and goes on. `done` (a role's end in a team workflow) takes a summary for the
next role. ReAct is one tool loop; the four-role team runs three, each on its share of the calls
(workflows/builtin/).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from stages.evaluation.agents.llm.session import Session

PYTHON = {"type": "function", "function": {
    "name": "python",
    "description": "Run Python code in a persistent Python kernel with cwd /workspace, as a notebook "
                   "cell; returns its exit status, stdout and stderr. Variables, imports and loaded data "
                   "persist between calls, and files under work/ do; a call that times out or crashes "
                   "restarts the kernel (variables lost, files kept).",
    "parameters": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}}}
SUBMIT = {"type": "function", "function": {
    "name": "submit", "description": "Hand in work/answer.json (and any artifact) as they are now; ends the task.",
    "parameters": {"type": "object", "properties": {}}}}
DONE = {"type": "function", "function": {
    "name": "done", "description": "End your part and pass a summary to the next member of the team.",
    "parameters": {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}}}
FINISH = {"submit": SUBMIT, "done": DONE}
CONTINUE = "No tool was called. Continue with the `python` tool, or call `{finish}` when you are done."


@dataclass(frozen=True)
class Ended:
    """How a tool loop ended: `submitted`, `done` or `max_turns` (its own share of turns)."""

    reason: str
    summary: str = ""


async def tool_loop(session: Session, messages: list[dict], role: str, finish: dict, turns: int) -> Ended:
    """Call the model with `python` and `finish` until it finishes or `turns` calls are made."""
    name = finish["function"]["name"]
    for _ in range(turns):
        reply = await session.chat.complete(messages, role, tools=[PYTHON, finish])
        messages.append(reply.message())
        if not reply.tool_calls:
            messages.append({"role": "user", "content": CONTINUE.format(finish=name)})
            continue
        ended = None
        for call in reply.tool_calls:
            result, ended_now = await _tool(session, call, name)
            ended = ended or ended_now
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        if ended is not None:
            return ended
    return Ended("max_turns")


async def _tool(session: Session, call: dict, finish: str) -> tuple[str, Ended | None]:
    """The result of one tool call, and how the loop ends when it was an accepted finish."""
    tool, text = call["function"]["name"], call["function"]["arguments"] or "{}"
    try:
        arguments = text if isinstance(text, dict) else json.loads(text)
        if not isinstance(arguments, dict):
            raise ValueError("not a JSON object")
    except (ValueError, TypeError) as error:
        return f"error: the arguments of `{tool}` are not a JSON object ({error}); send valid JSON", None
    if tool == "python":
        code = arguments.get("code")
        if not isinstance(code, str):
            return "error: `python` takes {\"code\": \"<python source>\"}", None
        return session.report(await session.run(code)), None
    if tool == finish == "submit":
        problem = await session.answer_problem()
        return (f"not submitted: {problem}", None) if problem else ("submitted", Ended("submitted"))
    if tool == finish == "done":
        return "done", Ended("done", str(arguments.get("summary", ""))[:4000])
    return f"error: there is no tool `{tool}`; the tools are `python` and `{finish}`", None
