"""Strategies that ask for a whole program: one turn, SelfDebug and Reflexion.

- `one_turn` (ST-Bench's single-agent baseline): one call, its program run once.
- `selfdebug` (ScienceAgentBench): run the program; on failure show the error and ask for a fix.
  Each round's context is only the system prompt, the task, the last reply and the error (at most
  `ERROR_CHARS` characters of it, its start and end). The loop stops at success, after
  `max_rounds` runs (a bound), or when the model sends back the same program (`code_repeated`).
- `reflexion`: the actor (role `actor`) writes a program from the task, its previous program, that
  program's feedback and every reflection so far; after a failed run a reflection call (role
  `reflection`) diagnoses it in words. It stops at success or after `max_rounds` attempts.

A run succeeds when the program exits 0 and `work/answer.json` is a JSON object.
"""

from __future__ import annotations

from stages.evaluation.agents.llm.prompts import extract_code, system_prompt, task_message
from stages.evaluation.agents.llm.session import Session
from stages.evaluation.transcript import capped

ERROR_CHARS = 8000
NO_CODE = "Your reply had no ```python block."


async def one_turn(session: Session) -> str:
    """Ask once for a complete program and run it once; returns the stop reason."""
    config = session.config
    messages = [{"role": "system", "content": system_prompt("one_turn", config.scaffold, config.domain)},
                task_message(session.task)]
    code = extract_code((await session.chat.complete(messages, "agent")).content)
    if code is None:
        return "no_code"
    await session.run(code)
    return "done"


async def selfdebug(session: Session) -> str:
    """Generate, run, and debug; returns the stop reason."""
    config = session.config
    base = [{"role": "system", "content": system_prompt("selfdebug", config.scaffold, config.domain)},
            task_message(session.task)]
    reply = (await session.chat.complete(base, "agent")).content
    code = extract_code(reply)
    for round_number in range(1, config.max_rounds + 1):
        feedback = await failure(session, code)
        if feedback is None:
            return "done"
        if round_number == config.max_rounds:
            return "max_rounds"
        ask = f"{feedback}\n\nSend the corrected complete program in one ```python block."
        reply = (await session.chat.complete([*base, {"role": "assistant", "content": reply},
                                              {"role": "user", "content": ask}], "agent")).content
        new = extract_code(reply)
        if new is not None and new == code:
            return "code_repeated"
        code = new
    return "max_rounds"


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


async def reflexion(session: Session) -> str:
    """Attempt, reflect, attempt again; returns the stop reason."""
    config = session.config
    actor = {"role": "system", "content": system_prompt("actor", config.scaffold, config.domain)}
    critic = {"role": "system", "content": system_prompt("reflection", False, config.domain)}
    reflections: list[str] = []
    previous = ""
    for attempt in range(1, config.max_rounds + 1):
        notes = previous + "".join(f"\n\n## Reflection {i}\n{text}" for i, text in enumerate(reflections, 1))
        reply = await session.chat.complete([actor, task_message(session.task, notes.strip())], "actor")
        code = extract_code(reply.content)
        feedback = await failure(session, code, "The reply had no ```python block.")
        if feedback is None:
            return "done"
        if attempt == config.max_rounds:
            return "max_rounds"
        previous = f"## Previous program\n```python\n{code or ''}\n```\n\n## Its feedback\n{feedback}"
        reflection = await session.chat.complete([critic, task_message(session.task, previous)], "reflection")
        reflections.append(reflection.content.strip())
    return "max_rounds"
