"""A reference-model agent: hands in what one standard baseline predicts (runs in the sandbox).

Usage: `python /agent/reference.py <model> /workspace`. It reads the prompt's scope and artifact
blocks and `data/`, runs `reference_models.MODELS[model]`, writes the artifact and an
`answer.json` without reported metrics. On a task whose artifact the model cannot fill it writes
nothing (a reference model of another category).
"""

import json
import sys
from pathlib import Path

import reference_models as models


def main() -> None:
    """Write the reference model's artifact for the workspace given as argument."""
    model, workspace = sys.argv[1], Path(sys.argv[2])
    prompt = (workspace / "prompt.md").read_text()
    try:
        artifact = models.read_block(prompt, "Artifact")
    except ValueError:
        return
    scope = models.read_block(prompt, "Scope")
    kinds = {"region_partition": ("entities",), "mean_flow_split": ("entities",)}
    if artifact["rows"]["kind"] not in kinds.get(model, ("holdout", "hidden_gaps", "held_out_entities")):
        return
    tables = models.load_scoped(workspace / "data", scope)
    required = models.required_rows(tables, scope, artifact)
    frame = models.MODELS[model](tables, scope, artifact, required)
    frame.to_parquet(workspace / "work" / artifact["file"], index=False)
    (workspace / "work" / "answer.json").write_text(json.dumps({"metrics": {}}))


if __name__ == "__main__":
    main()
