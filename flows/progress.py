"""A flow run's progress as a Prefect progress artifact, for work the flow does without a task run per item.

Created at 0 % when the work starts and updated as items finish, at most every `every_s` seconds
and once at the end, so that a long run is watched in the UI at the cost of a few API calls, not
one task run per item. An API that refuses is noted (flows.prefect_api.note), never raised: the
run goes on without its progress bar.
"""

from __future__ import annotations

import time
from uuid import UUID

from prefect.artifacts import create_progress_artifact, update_progress_artifact

from flows.prefect_api import publish


class Progress:
    """`done` of `total` items, shown as a percentage under `key`."""

    def __init__(self, key: str, total: int, description: str, every_s: float = 2.0):
        self.key, self.total, self.description, self.every_s = key, total, description, every_s
        self.done, self._shown = 0, time.monotonic()
        self.id: UUID | None = publish(f"the progress artifact {key!r}", create_progress_artifact,
                                       progress=0.0 if total else 100.0, key=key, description=description)

    def advance(self) -> None:
        """One more item finished."""
        self.done += 1
        if self.id is not None and (self.done == self.total or time.monotonic() - self._shown >= self.every_s):
            self._shown = time.monotonic()
            publish(f"the progress artifact {self.key!r}", update_progress_artifact, artifact_id=self.id,
                    progress=round(100.0 * self.done / self.total, 1),
                    description=f"{self.description}: {self.done} of {self.total}")
