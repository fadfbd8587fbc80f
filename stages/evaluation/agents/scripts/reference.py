"""A reference-model agent: hands in what one standard baseline predicts.

Usage: `python /agent/reference.py <model> /workspace` (in the sandbox; `reference_models.hand_in`
says what it writes). The reference agents of params.yaml run the same function in the harness
process unless their options ask for the sandbox (see `stages.evaluation.agents.builtin.reference`).
"""

import sys
from pathlib import Path

import reference_models as models

if __name__ == "__main__":
    models.hand_in(sys.argv[1], Path(sys.argv[2]))
