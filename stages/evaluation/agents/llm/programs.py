"""The `program` operator: ask for a whole program, run it, and repair it when a workflow says so.

- No repair (ST-Bench's one_turn baseline): one call, its program run once.
- `debug` (SelfDebug, ScienceAgentBench): run the program; on failure show the error and ask for a
  fix. Each round's context is only the system prompt, the task, the last reply and the error (at
  most `ERROR_CHARS` characters of it, its start and end). It stops at success, after its rounds
  (a bound), or when the model sends back the same program (`code_repeated`).
- `reflect` (Reflexion): the actor writes a program from the task, its previous program, that
  program's feedback and every reflection so far; after a failed run a reflection call (the
  node's `reflect_role`) diagnoses it in words. It stops at success or after its rounds.

A run succeeds when the program exits 0 and `work/answer.json` is a JSON object. The operator
returns its stop reason and its note for later nodes (what became of the program).
"""

from __future__ import annotations

from stages.evaluation.agents.llm.prompts import extract_code, system_prompt, task_message
from stages.evaluation.agents.llm.session import Session
from stages.evaluation.transcript import capped

ERROR_CHARS = 8000
NO_CODE = "Your reply had no ```python block."
HANDED_IN = "The program ran and handed in work/answer.json."


async def program(session: Session, prompt: str, role: str, notes: str, repair: str, rounds: int,
                  reflect_role: str | None) -> tuple[str, str]:
    """Run the operator; (stop reason, note)."""
    if repair == "reflect":
        return await _reflect(session, prompt, role, notes, rounds, reflect_role or "reflection")
    config = session.config
    base = [{"role": "system", "content": system_prompt(prompt, config.scaffold, config.domain)},
            task_message(session.task, notes)]
    reply = (await session.chat.complete(base, role)).content
    code = extract_code(reply)
    if repair == "none":
        if code is None:
            return "no_code", NO_CODE
        ran = await session.run(code)
        return "done", f"The program exited with code {ran.exit_code}."
    for round_number in range(1, rounds + 1):
        feedback = await failure(session, code)
        if feedback is None:
            return "done", HANDED_IN
        if round_number == rounds:
            return "max_rounds", feedback
        ask = f"{feedback}\n\nSend the corrected complete program in one ```python block."
        reply = (await session.chat.complete([*base, {"role": "assistant", "content": reply},
                                              {"role": "user", "content": ask}], role)).content
        new = extract_code(reply)
        if new is not None and new == code:
            return "code_repeated", feedback
        code = new
    return "max_rounds", ""


async def failure(session: Session, code: str | None, missing: str = NO_CODE) -> str | None:
    """Run `code`; what went wrong, for the model (`missing` without code), or None when all is handed in."""
    if code is None:
        return missing
    ran = await session.run(code)
    if ran.exit_code != 0:
        status = "was killed at its time limit" if ran.exit_code is None else f"exited with code {ran.exit_code}"
        return f"The program {status}.\nstderr (end):\n{capped(ran.stderr, ERROR_CHARS)}"
    problem = await session.answer_problem()
    if problem is not None:
        return f"The program ran, but {problem}.\nstdout (end):\n{capped(ran.stdout, ERROR_CHARS)}"
    return None


async def _reflect(session: Session, prompt: str, role: str, notes: str, rounds: int,
                   reflect_role: str) -> tuple[str, str]:
    config = session.config
    actor = {"role": "system", "content": system_prompt(prompt, config.scaffold, config.domain)}
    critic = {"role": "system", "content": system_prompt("reflection", False, config.domain)}
    reflections: list[str] = []
    previous, feedback = "", ""
    for attempt in range(1, rounds + 1):
        context = "\n\n".join(part for part in (notes, previous) if part)
        context += "".join(f"\n\n## Reflection {i}\n{text}" for i, text in enumerate(reflections, 1))
        reply = await session.chat.complete([actor, task_message(session.task, context.strip())], role)
        code = extract_code(reply.content)
        feedback = await failure(session, code, "The reply had no ```python block.")
        if feedback is None:
            return "done", HANDED_IN
        if attempt == rounds:
            return "max_rounds", feedback
        previous = f"## Previous program\n```python\n{code or ''}\n```\n\n## Its feedback\n{feedback}"
        reflection = await session.chat.complete([critic, task_message(session.task, previous)], reflect_role)
        reflections.append(reflection.content.strip())
    return "max_rounds", feedback
