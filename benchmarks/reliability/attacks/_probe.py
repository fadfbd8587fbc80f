"""Shared by the attack programs: the host facts handed in, and the one report line."""

import json
import sys

SECRETS = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}


def report(**found):
    """Print the findings as the last line of stdout; the harness compares them exactly."""
    print("REPORT " + json.dumps(found, sort_keys=True), flush=True)


def attempt(action):
    """Run `action`; return None when it succeeded, else the exception's class name."""
    try:
        action()
    except Exception as error:  # noqa: BLE001 - every failure is a finding
        return type(error).__name__
    return None
