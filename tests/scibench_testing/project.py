"""A temporary copy of the project for end-to-end tests, run offline on the tiny profile.

The copy holds the *tracked* files of the checkout (`git ls-files`), with their working-tree
content: what is tested is what a commit of the checkout would hold, edits included. Untracked
files are left out on purpose: scratch scripts, a half-written module, local data or caches in
the working tree (or another change in progress beside this one) must not decide whether the
end-to-end tests pass, and a file the pipeline needs but nobody added to git fails here instead
of passing locally and failing on a clean clone. A new file enters the test once it is `git add`-ed.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml

from benchmarks.runs import offline_env

ROOT = Path(__file__).resolve().parents[2]
__all__ = ["ROOT", "copy_project", "edit_params", "offline_env", "run", "tiny_project", "tracked_files"]


def tracked_files(root: Path = ROOT) -> list[str]:
    """The checkout's tracked files that exist in the working tree, as relative paths."""
    listing = subprocess.run(["git", "ls-files", "--cached", "-z"], cwd=root, capture_output=True,
                             check=True).stdout.decode()
    return [name for name in dict.fromkeys(listing.split("\0")) if name and (root / name).is_file()]


def copy_project(target: Path, root: Path = ROOT) -> Path:
    """Copy the tracked files of `root` into `target` (created) and return it."""
    for name in tracked_files(root):
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, destination)
    return target


def run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 1500) -> str:
    """Run a command to completion and return its stdout; fail the test with its output tails."""
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    return done.stdout


def edit_params(project: Path, changes: dict) -> str:
    """Merge `changes` into the project's params.yaml (nested dicts merge); return the old text."""
    path = project / "params.yaml"
    before = path.read_text()
    params = yaml.safe_load(before)
    _merge(params, changes)
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    return before


# The tasks the end-to-end tests build at the tiny profile: the first five CAMELS tasks (one per
# method family); the whole catalog is exercised by tests/catalog and by `make run`.
TINY_TASKS = ["camels-aridity-runoff", "camels-gap-filling", "camels-model-comparison",
              "camels-signature-clustering", "camels-streamflow-prediction", "gridcells-ndvi-precipitation"]


# The reference agents the tiny tasks name. The others score 0 there by construction (every metric
# must beat each standard model strictly, its own value included), and each costs three stages.
TINY_REFERENCES = ["climatology", "linear_forcing", "interpolate", "region_partition", "mean_flow_split"]
TINY_AGENTS = ["oracle", "heuristic", "fabricate", "nodata", "prior", "defensive", *TINY_REFERENCES]


def tiny_project(target: Path, agents: dict[str, dict] | None = None) -> Path:
    """A git-initialised copy of the project on the tiny profile, with extra agents configured."""
    project = copy_project(target)
    edit_params(project, {"profile": "tiny", "agents": agents or {}, "construct": {"tasks": TINY_TASKS},
                          "evaluate": {"agents": TINY_AGENTS}, "validity": {"references": TINY_REFERENCES}})
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    return project


def _merge(into: dict, changes: dict) -> None:
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value
