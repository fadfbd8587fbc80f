"""Run a workflow document on one query: its nodes in order, each operator on the notes of its inputs.

The workflow's stop reason is that of its last node run; a node that hands in (`submit`) ends it.
"""

from __future__ import annotations

from stages.evaluation.agents.llm.ensemble import ensemble
from stages.evaluation.agents.llm.programs import program
from stages.evaluation.agents.llm.prompts import STRATEGY, system_prompt, task_message
from stages.evaluation.agents.llm.session import Session
from stages.evaluation.agents.llm.tools import FINISH, tool_loop
from stages.evaluation.agents.llm.workflows.documents import RETRY, catalogue, parse_workflow
from stages.evaluation.agents.llm.workflows.schema import Node, Workflow, builtin_workflow

READS = "work/answer.json reads as a JSON object, and the declared artifact (if any) has its columns and rows."


async def run_workflow(workflow: Workflow, session: Session) -> str:
    """Run every node (until one hands in); the stop reason."""
    nodes = {node.id: node for node in workflow.nodes}
    notes: dict[str, str] = {}
    loops_left = sum(node.op == "tool_loop" for node in workflow.nodes)
    reason = "done"
    for node in workflow.nodes:
        context = "\n\n".join(f"## {nodes[name].note_heading()}\n{notes[name]}" for name in node.inputs)
        if node.op == "tool_loop":
            reason, notes[node.id] = await _tool_loop(session, node, context, loops_left)
            loops_left -= 1
        else:
            reason, notes[node.id] = await OPERATORS[node.op](session, node, context)
        if reason == "submitted":
            break
    return reason


async def _generate(session: Session, node: Node, context: str) -> tuple[str, str]:
    config = session.config
    messages = [{"role": "system", "content": system_prompt(node.prompt, config.scaffold, config.domain)},
                task_message(session.task, context)]
    return "done", (await session.chat.complete(messages, node.role)).content.strip()


async def _program(session: Session, node: Node, context: str) -> tuple[str, str]:
    rounds = session.config.max_rounds if node.rounds == "max_rounds" else node.rounds
    return await program(session, node.prompt, node.role, context, node.repair, rounds, node.reflect_role)


async def _ensemble(session: Session, node: Node, context: str) -> tuple[str, str]:
    return await ensemble(session, node.prompt, node.role, context, node.samples)


async def _verify(session: Session, node: Node, context: str) -> tuple[str, str]:
    problems = [problem for problem in (await session.answer_problem(), await session.artifact_problem()) if problem]
    return "done", READS if not problems else f"The hand-in is not right as it is: {'; '.join(problems)}."


async def _tool_loop(session: Session, node: Node, context: str, loops_left: int) -> tuple[str, str]:
    config = session.config
    turns = node.turns if isinstance(node.turns, int) else max(1, (config.max_turns - session.chat.calls)
                                                                 // loops_left)
    messages = [{"role": "system", "content": system_prompt(node.prompt, config.scaffold, config.domain)},
                task_message(session.task, context)]
    ended = await tool_loop(session, messages, node.role, FINISH[node.finish], turns)
    return ended.reason, ended.summary or f"(the {node.role} ran out of turns)"


async def _compose(session: Session, node: Node, context: str) -> tuple[str, str]:
    messages = [{"role": "system", "content": f"{STRATEGY[node.prompt]}\n\n{catalogue()}"},
                task_message(session.task, context)]
    composed = None
    for _ in range(2):
        reply = (await session.chat.complete(messages, node.role)).content
        try:
            composed = _composable(parse_workflow(reply))
            break
        except ValueError as problem:
            session.say(f"{node.id}: the composed document cannot run ({problem})")
            messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": RETRY.format(
                problem=problem)}]
    if composed is None:
        composed = builtin_workflow(node.fallback)
    session.say(f"{node.id}: runs {composed.name!r} ({', '.join(n.id for n in composed.nodes)})")
    return await run_workflow(composed, session), f"(the composed workflow {composed.name!r} ran)"


def _composable(workflow: Workflow) -> Workflow:
    if any(node.op == "compose" for node in workflow.nodes):
        raise ValueError("a composed workflow may not compose again (no `compose` node)")
    return workflow


OPERATORS = {"generate": _generate, "program": _program, "verify": _verify, "ensemble": _ensemble,
             "compose": _compose}
