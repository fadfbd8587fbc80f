"""The `ensemble` operator: self-consistency over whole programs.

`samples` times: one call for a complete program (the node's instructions), run in the query's
kernel; after each run the hand-in it left (`work/answer.json` and the artifact the prompt's
`## Artifact` block declares) is set aside in the sandbox by a cell of the harness's own. The
sample whose reported numbers agree most with the others' (the medoid: the least summed relative
distance over the numbers two hand-ins share) is put back as the hand-in; a sample that left no
JSON object is chosen only when none did. A loop stopped at a bound (calls, tokens, wall time) hands
in the best of the samples it finished. The samples differ only as the endpoint's sampling makes
them differ: at temperature 0 with a fixed seed they are one program at `samples` times its cost.
"""

from __future__ import annotations

import asyncio
import math

from stages.catalog_scopes import read_prompt_block
from stages.evaluation.agents.llm.prompts import extract_code, system_prompt, task_message
from stages.evaluation.agents.llm.session import Session
from stages.sandbox.workspace import ANSWER_FILE

ASIDE = "work/.ensemble"
SET_ASIDE = """import os as _os, shutil as _shutil
_os.makedirs({folder!r}, exist_ok=True)
for _name in {names!r}:
    if _os.path.isfile("work/" + _name):
        _shutil.move("work/" + _name, {folder!r} + "/" + _name)
"""
PUT_BACK = """import os as _os, shutil as _shutil
for _name in {names!r}:
    if _os.path.isfile({folder!r} + "/" + _name):
        _shutil.copyfile({folder!r} + "/" + _name, "work/" + _name)
_shutil.rmtree({aside!r}, ignore_errors=True)
"""


async def ensemble(session: Session, prompt: str, role: str, notes: str, samples: int) -> tuple[str, str]:
    """Run the operator; (stop reason, note)."""
    config = session.config
    messages = [{"role": "system", "content": system_prompt(prompt, config.scaffold, config.domain)},
                task_message(session.task, notes)]
    names = [ANSWER_FILE, *_artifact(session.task)]
    answers: list[dict[str, float] | None] = []
    try:
        for index in range(samples):
            code = extract_code((await session.chat.complete(messages, role)).content)
            if code is not None:
                await session.run(code)
            answers.append(await _numbers(session))
            await _harness_cell(session, SET_ASIDE.format(folder=f"{ASIDE}/{index}", names=names))
    finally:  # stopped at a bound too: the samples set aside so far are not lost
        if answers:
            chosen = medoid(answers)
            await _harness_cell(session, PUT_BACK.format(folder=f"{ASIDE}/{chosen}", names=names, aside=ASIDE))
            session.say(f"  ensemble: sample {chosen + 1} of {len(answers)} run handed in")
    return "done", (f"Of {samples} programs, sample {chosen + 1} was handed in: its numbers agree most with "
                    "the others'.")


def medoid(answers: list[dict[str, float] | None]) -> int:
    """The index of the answer closest to all others (the first on a tie; answers that are None last)."""
    def distance(a: dict[str, float], b: dict[str, float]) -> float:
        shared = sorted(set(a) & set(b))
        if not shared:
            return 1.0
        return sum(abs(a[k] - b[k]) / (abs(a[k]) + abs(b[k]) or 1.0) for k in shared) / len(shared)

    valid = [index for index, answer in enumerate(answers) if answer is not None]
    if not valid:
        return 0
    return min(valid, key=lambda i: (sum(distance(answers[i], answers[j]) for j in valid if j != i), i))


def numbers(value, prefix: str = "") -> dict[str, float]:
    """The finite numbers of a JSON value by their path (booleans are not numbers)."""
    if isinstance(value, dict):
        return {path: number for key, item in value.items()
                for path, number in numbers(item, f"{prefix}{key}.").items()}
    if isinstance(value, list):
        return {path: number for index, item in enumerate(value)
                for path, number in numbers(item, f"{prefix}{index}.").items()}
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return {prefix.rstrip("."): float(value)}
    return {}


async def _numbers(session: Session) -> dict[str, float] | None:
    answer, _ = await session.answer()
    return None if answer is None else numbers(answer)


def _artifact(prompt: str) -> list[str]:
    try:
        return [read_prompt_block(prompt, "Artifact")["file"]]
    except (ValueError, KeyError):
        return []


async def _harness_cell(session: Session, code: str) -> None:
    """A cell of the harness's own (not the model's: not in the transcript's code runs)."""
    await asyncio.get_running_loop().run_in_executor(None, session.kernel.run, code, 30.0, 4096)
