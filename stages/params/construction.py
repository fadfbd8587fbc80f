"""The `construct` section: which tasks are built, how queries are drawn and split, how labels are run."""

from __future__ import annotations

from pydantic import Field

from stages.params.section import Profile, Section
from stages.sandbox.limits import SandboxLimits


class SplitParams(Section):
    """Per-task split shares; the rest is test, which never has fewer than `min_test` queries.

    `min_test` is one number, or one per profile.
    """

    train: float = 0.6
    val: float = 0.2
    min_test: int | dict[Profile, int] = 3

    def for_profile(self, profile: str) -> SplitParams:
        """These shares with `min_test` resolved for one profile."""
        if isinstance(self.min_test, int):
            return self
        return self.model_copy(update={"min_test": self.min_test[profile]})


class ConstructParams(Section):
    """The four-stage construction flow."""

    domains: list[str]
    tasks: list[str] = []  # build only these task ids (all of the domains' tasks when empty)
    queries_per_task: dict[Profile, int]
    hypothesis_min_queries: int = Field(3, ge=1)  # so that the constant-answer gate can be measured
    split: SplitParams = SplitParams()
    max_jaccard: float = Field(0.7, gt=0, le=1)  # near-duplicate queries: entity-day Jaccard above
    verify_rel_tol: float = 1e-6
    concurrency: int = Field(2, ge=1)
    limits: SandboxLimits = SandboxLimits()
    warm: bool = True  # annotator runs fork from a warm interpreter in one sandbox per worker
    # finished labels and verifications, reused by a resumed or repeated build ("": none kept)
    resume_dir: str = ".cache/construct"
    dask_address: str | None = None  # label and verify on an existing Dask cluster (tcp://host:8786)
