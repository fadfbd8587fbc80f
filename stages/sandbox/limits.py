"""What one run may use: `SandboxLimits` as params.yaml states it, `Limits` as the sandbox applies it.

`SandboxLimits` is the one definition of the limits and holds their one set of defaults: params.yaml's
`construct.limits` and `evaluate.limits` validate into it (an unknown key fails, naming it), in the
units people write (GB, MB). `SandboxLimits.to_limits` is the one translation into `Limits`, the
bytes that reach the cgroup, the rlimits and bwrap's tmpfs sizes; every caller goes through it.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

GIB, MIB = 1 << 30, 1 << 20


class SandboxLimits(BaseModel):
    """Resource limits of one sandboxed run; memory, processes and CPU are totals over its processes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    wall_seconds: float = 600.0
    cpu_seconds: int = 600
    memory_gb: float = 8.0  # the run's total resident memory, and each process's address space
    file_size_mb: int = 1024
    processes: int = 512
    cpu_cores: float = 1.0
    work_mb: int = 1024
    tmp_mb: int = 256
    shm_mb: int = 64
    output_mb: int = 64

    def to_limits(self) -> Limits:
        """These limits in the sandbox's units (bytes)."""
        memory = int(self.memory_gb * GIB)
        return Limits(
            wall_seconds=self.wall_seconds,
            cpu_seconds=self.cpu_seconds,
            memory_bytes=memory,
            address_space_bytes=memory,
            file_size_bytes=self.file_size_mb * MIB,
            processes=self.processes,
            cpu_cores=self.cpu_cores,
            work_bytes=self.work_mb * MIB,
            tmp_bytes=self.tmp_mb * MIB,
            shm_bytes=self.shm_mb * MIB,
            output_bytes=self.output_mb * MIB,
        )


@dataclass(frozen=True)
class Limits:
    """What one run may use, as the sandbox applies it; made by `SandboxLimits.to_limits`.

    Totals bind all of the run's processes together.
    """

    wall_seconds: float
    cpu_seconds: int  # total CPU time (cgroup), and each process's RLIMIT_CPU
    memory_bytes: int  # total resident memory incl. tmpfs pages (cgroup)
    address_space_bytes: int  # each process's RLIMIT_AS
    file_size_bytes: int  # each file's size (RLIMIT_FSIZE)
    processes: int  # total (cgroup pids.max); RLIMIT_NPROC when no cgroup can be made
    cpu_cores: float  # CPU bandwidth (cgroup CFS quota)
    work_bytes: int  # the work/ tmpfs
    tmp_bytes: int  # the /tmp tmpfs
    shm_bytes: int  # the /dev/shm tmpfs
    output_bytes: int  # stdout + stderr, at which the run is stopped
