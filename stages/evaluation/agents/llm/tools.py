"""Tool loops: ReAct, and the multi-agent role workflow built on the same loop.

ReAct: the model calls a `python` tool until it calls its finishing tool (`submit`, or `done`).

Each `python` call runs as the next cell of the query's kernel (stages/sandbox/kernel.py: state
persists as in a notebook) and its output, capped, goes back as the tool result. Malformed tool
arguments and unknown tools are told to the model, which goes on. A reply without a tool call gets
a prompt to continue. `submit` counts only when `work/answer.json`
is a JSON object; otherwise the model is told why and goes on. `done` (a workflow role's end)
takes a summary for the next role.

The workflow runs planner -> data preparation -> modeler -> verifier. Each role has its own system
prompt and calls the model under its own role name, so the harness counts usage per role. The
planner answers once, without tools; the other three each run a tool loop with their share of the
remaining turns: data preparation and the modeler end with `done` and a summary for the next
role, the verifier with `submit`. A role that runs out of its turns hands on what it reached; the
query's own bounds still stop the whole workflow.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from stages.evaluation.agents.llm.prompts import system_prompt, task_message
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
ROLES = (("data_preparation", DONE), ("modeler", DONE), ("verifier", SUBMIT))
CONTINUE = "No tool was called. Continue with the `python` tool, or call `{finish}` when you are done."


@dataclass(frozen=True)
class Ended:
    """How a tool loop ended: `submitted`, `done` or `max_turns` (its own share of turns)."""

    reason: str
    summary: str = ""


async def react(session: Session) -> str:
    """The single-agent ReAct strategy; returns the stop reason."""
    config = session.config
    messages = [{"role": "system", "content": system_prompt("react", config.scaffold, config.domain)},
                task_message(session.task)]
    return (await tool_loop(session, messages, "agent", SUBMIT, config.max_turns)).reason


async def workflow(session: Session) -> str:
    """Run the four roles in order; returns the stop reason."""
    config = session.config
    planner = [{"role": "system", "content": system_prompt("planner", config.scaffold, config.domain)},
               task_message(session.task)]
    notes = "## Plan\n" + (await session.chat.complete(planner, "planner")).content.strip()
    ended = None
    for index, (role, finish) in enumerate(ROLES):
        left = config.max_turns - session.chat.calls
        turns = max(1, left // (len(ROLES) - index))
        messages = [{"role": "system", "content": system_prompt(role, config.scaffold, config.domain)},
                    task_message(session.task, notes)]
        ended = await tool_loop(session, messages, role, finish, turns)
        summary = ended.summary or f"(the {role} ran out of turns)"
        notes += f"\n\n## From the {role.replace('_', ' ')}\n{summary}"
    return ended.reason if ended is not None else "max_turns"


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
