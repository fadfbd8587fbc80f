"""Entry point: `python -m agent` in /workspace runs the configured strategy to its stop.

The last line on stdout is `scibench-llm stop: <reason>`. The exit code is that of the last run of
the model's code (0 when none ran), 3 when the model API failed, 2 when the loop itself failed.
"""

from __future__ import annotations

import sys
import traceback

from .chat import Stop
from .programs import one_turn, reflexion, selfdebug
from .session import open_session
from .tools import react, workflow

STRATEGIES = {"one_turn": one_turn, "react": react, "selfdebug": selfdebug, "reflexion": reflexion,
              "workflow": workflow}


def main() -> int:
    """Run the loop; returns the exit code."""
    session = open_session()
    try:
        reason = STRATEGIES[session.config.strategy](session)
    except Stop as stop:
        reason = stop.reason
        print(f"stopped: {stop}", flush=True)
    except Exception:  # the loop's own failure: say so, and hand in what work/ holds
        traceback.print_exc()
        print("scibench-llm stop: loop_error", flush=True)
        return 2
    print(f"scibench-llm stop: {reason}", flush=True)
    return 3 if reason == "model_unavailable" else session.exit_code()


if __name__ == "__main__":
    sys.exit(main())
