"""The heuristic data scientist as a script: `python /agent/heuristic_agent.py /workspace`.

The same as `python -m heuristic /workspace` with this folder on the path (as it is for a script
run from it), in the one form a warm pool runs (`AgentProgram.warm`).
"""

from heuristic.__main__ import main

if __name__ == "__main__":
    main()
