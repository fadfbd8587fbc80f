"""What benchmark version produced a result: git describe, the build's dvc.lock hash, packages."""

from __future__ import annotations

import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from stages.hashing import content_hash
from stages.yamlfile import read_yaml

BUILD_STAGES = ("synthesize", "ingest", "align", "construct")
PACKAGES = ("scibench", "dvc", "prefect", "pandas", "pyarrow", "numpy", "scikit-learn", "statsmodels", "openai",
            "matplotlib")


def git_describe(root: Path) -> str:
    """`git describe --tags --always --dirty`, or "unversioned" outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "describe", "--tags", "--always", "--dirty"],
            cwd=root, capture_output=True, text=True, timeout=10, check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return "unversioned"
    return out.stdout.strip() or "unversioned"


def build_lock_hash(root: Path) -> str | None:
    """Hash of the dvc.lock entries of the stages that build the benchmark (not the evaluations)."""
    path = root / "dvc.lock"
    if not path.exists():
        return None
    stages = read_yaml(path).get("stages", {})
    build = {name: entry for name, entry in stages.items() if name.split("@")[0] in BUILD_STAGES}
    return content_hash(build)


def package_versions() -> dict[str, str]:
    """Installed versions of the packages results depend on."""
    found = {}
    for name in PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


def benchmark_version(root: Path, benchmark_id: str) -> dict:
    """The version block recorded in every result."""
    return {
        "benchmark_id": benchmark_id,
        "git": git_describe(root),
        "dvc_lock": build_lock_hash(root),
        "packages": package_versions(),
    }
