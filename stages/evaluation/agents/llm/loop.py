"""One query's agent loop, run on the evaluation process's event loop: the strategy to its stop.

The loop's record (what it did, one line a step) becomes the attempt's stdout; its last line is
`scibench-llm stop: <reason>`, which the service reads for the bound the agent stopped at. The
exit code is that of the last run of the model's code (0 when none ran), 3 when the model API
failed, 2 when the loop itself failed.
"""

from __future__ import annotations

import logging
import time
import traceback
from dataclasses import dataclass

from stages.evaluation.agents.llm import eventloop
from stages.evaluation.agents.llm.chat import Chat, Stop
from stages.evaluation.agents.llm.interpreter import run_workflow
from stages.evaluation.agents.llm.session import Config, Session
from stages.evaluation.transcript import Stop as StopEvent
from stages.sandbox.kernel import Kernel, KernelDied, StartingKernel

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LoopOutcome:
    """How a loop ended: its exit code, its record, and the limits its cells hit."""

    exit_code: int
    record: str
    limits_hit: tuple[str, ...] = ()
    events: tuple = ()  # the transcript's (stages/evaluation/transcript.py)


async def run_strategy(session: Session) -> int:
    """Run the configured strategy to its stop; the loop's exit code."""
    try:
        reason = await run_workflow(session.config.workflow, session)
    except Stop as stop:
        reason = stop.reason
        session.say(f"stopped: {stop}")
    except KernelDied as error:  # the model's code ended its own sandbox: nothing more can run
        session.say(f"{error}\nscibench-llm stop: kernel_died")
        session.events.append(StopEvent(reason="kernel_died", detail="the model's code ended its sandbox"))
        return 1
    except Exception:  # the loop's own failure: say so, and hand in what work/ holds
        log.exception("the llm loop failed")
        session.say(traceback.format_exc())
        session.say("scibench-llm stop: loop_error")
        session.events.append(StopEvent(reason="loop_error"))
        return 2
    session.say(f"scibench-llm stop: {reason}")
    session.events.append(StopEvent(reason=reason))
    return 3 if reason == "model_unavailable" else session.exit_code()


def run_loop(config: Config, token: str, kernel: Kernel | StartingKernel, prompt: str) -> LoopOutcome:
    """Run one query's loop on the process's event loop and wait for it; the wall budget starts now."""
    record: list[str] = []
    events: list = []
    chat = Chat(token, config.model, config.max_turns, time.monotonic() + config.wall_budget_s, record.append,
                events)
    session = Session(config, chat, kernel, prompt, log=record, events=events)
    code = eventloop.run(run_strategy(session))
    hits = {hit for ran in session.runs for hit in ran.limits_hit if hit != "wall"}  # a code timeout is told
    return LoopOutcome(code, "\n".join(session.log) + "\n", tuple(sorted(hits)), tuple(events))
