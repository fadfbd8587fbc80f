"""Entry point: `python -m heuristic /workspace` (with the scripts folder on PYTHONPATH).

Reads the prompt, profiles `data/`, picks the family's standard method and runs it; when a method
raises, the next simpler one of its chain runs (stderr says which and why), and the last resort
answers the uninformed prior, so that `work/answer.json` is always written.
"""

from __future__ import annotations

import sys
import time
import traceback
from pathlib import Path

from heuristic.cluster import partition
from heuristic.fallbacks import interpolate_fill, mean_forecast, median_split, prior_answer
from heuristic.forecast import forecast
from heuristic.handin import write_handin
from heuristic.impute import impute
from heuristic.profile import Profile, read_profile
from heuristic.prompt import choose_plan, parse_prompt
from heuristic.statistic import statistic
from heuristic.transfer import transfer

METHODS = {
    "forecast": (forecast, mean_forecast),
    "impute": (impute, interpolate_fill),
    "partition": (partition, median_split),
    "transfer": (transfer, mean_forecast),
    "statistic": (statistic,),
    "none": (),
}


def main() -> None:
    """Answer the query of the workspace given as argument (default: the current directory)."""
    workspace = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
    started = time.monotonic()
    prompt = parse_prompt((workspace / "prompt.md").read_text())
    plan = choose_plan(prompt)
    print(f"heuristic: family {plan.family}, learners {plan.learners}", file=sys.stderr)
    target = (prompt.artifact or {}).get("rows", {}).get("column")
    handin = None
    try:
        profile = read_profile(workspace / "data", prompt.scope, target,
                               (prompt.artifact or {}).get("rows"))
        print(f"heuristic: target {profile.target}, drivers {profile.drivers}, "
              f"missing {profile.missing}", file=sys.stderr)
    except Exception:  # noqa: BLE001 - unreadable data leaves the methods that need none
        traceback.print_exc()
        profile = Profile(prompt.key, None, None, None, target)
    for method in METHODS[plan.family]:
        try:
            handin = method(profile, prompt, plan)
            break
        except Exception:  # noqa: BLE001 - a failed method falls back to the next, simpler one
            traceback.print_exc()
            print(f"heuristic: {method.__name__} failed; falling back", file=sys.stderr)
    if handin is None:
        handin = prior_answer(profile, prompt, plan)
    time_key = next((k for k in (prompt.artifact or {}).get("key", []) if k != prompt.key), None)
    write_handin(workspace / "work", handin, prompt.artifact, time_key)
    print(f"heuristic: done in {time.monotonic() - started:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
