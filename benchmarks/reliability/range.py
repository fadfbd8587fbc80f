"""The host an attack runs against: gold in reach of a careless sandbox, listeners, a bystander.

`AttackRange` lays out, in a temporary folder, what a real deployment has next to the sandbox: a
built benchmark with private gold and the annotator script, the evaluation journal, another
checkout of the project (and, when root, decoy checkouts under /opt and /srv), a 0600 root file,
TCP/UDP/unix listeners on the host, and a bystander process of the sandbox's own uid outside the
sandbox. `breaches()` lists what an attack managed against them: a connection received, the
bystander gone, a host setting changed, a cgroup or process left behind.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

from stages.sandbox.command import sandbox_identity

HOST_SETTINGS = ("/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches",
                 "/proc/sys/kernel/hostname", "/proc/sys/user/max_user_namespaces")
GOLD = '{"metrics": {"nse": 0.8123}}'


class AttackRange:
    """Host-side targets and tripwires for the attack programs (a context manager)."""

    def __init__(self, shared: Path | None = None):
        self.token = uuid.uuid4().hex
        self.root = Path(tempfile.mkdtemp(prefix="scibench-range-", dir="/var/tmp"))
        self.shared = shared if shared and shared.exists() else None
        self._sockets: list[socket.socket] = []
        self._extra_dirs: list[Path] = []

    def __enter__(self) -> AttackRange:
        self.root.chmod(0o755)
        project = self.root / "project"
        task = project / "processed/benchmark/tasks/camels-t1"
        self.public = task / "public"
        self.public.mkdir(parents=True)
        (self.public / "x.csv").write_text("x\n1\n2\n")
        (task / "private/annotator").mkdir(parents=True)
        gold = self.gold_text()
        (task / "private/gold.json").write_text(gold)
        (task / "private/annotator/reproduce.py").write_text(f"print({gold!r})\n")
        self.journal = project / "processed/runs/oracle/journal.jsonl"
        self.journal.parent.mkdir(parents=True)
        self.journal.write_text('{"answer_text": ' + repr(gold) + "}\n")
        self.project, self.benchmark, self.gold = project, project / "processed/benchmark", task / "private/gold.json"
        self.decoy_script = self._checkout(self.root / "other-checkout")
        self.decoys = [str(self.decoy_script)]
        if os.geteuid() == 0:
            for top in ("/opt", "/srv"):
                folder = Path(top) / f"scibench-decoy-{self.token[:8]}"
                self._extra_dirs.append(folder)
                self.decoys.append(str(self._checkout(folder)))
        self.root_secret = self.root / "root-only-secret"
        self.root_secret.write_text("secret\n")
        self.root_secret.chmod(0o600)
        self._listen()
        self.settings = self._read_settings()
        self.cgroups_before = _run_cgroups()
        self.bystander = self._start_bystander()
        return self

    def __exit__(self, *exc) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.bystander.pid, signal.SIGKILL)
        self.bystander.wait()
        for sock in self._sockets:
            sock.close()
        for folder in [*self._extra_dirs, self.root]:
            shutil.rmtree(folder, ignore_errors=True)

    def secrets(self) -> dict:
        """What the attack programs are told about the host (an attacker could guess as much)."""
        return {"gold": str(self.gold), "journal": str(self.journal), "benchmark": str(self.benchmark),
                "project": str(self.project), "decoy_script": str(self.decoy_script),
                "decoys": self.decoys, "shared": str(self.shared) if self.shared else None,
                "root_secret": str(self.root_secret), "tcp_port": self.tcp_port,
                "udp_port": self.udp_port, "abstract": f"scibench-{self.token}",
                "unix_path": str(self.root / "host.sock"), "token": self.token,
                "sentinel_pid": self.bystander.pid}

    def breaches(self) -> list[str]:
        """What attacks achieved against the host since the range was set up (empty: nothing)."""
        found = []
        for name, sock in self._named_sockets.items():
            try:
                if sock.type == socket.SOCK_DGRAM:
                    sock.recvfrom(64)
                else:
                    sock.accept()[0].close()
                found.append(f"a connection reached the host's {name} listener")
            except (BlockingIOError, OSError):
                pass
        if self.bystander.poll() is not None:
            found.append("the bystander process of the sandbox's uid was killed")
        if self._read_settings() != self.settings:
            found.append("a host kernel setting changed")
        leftovers = [p for p in _live_processes_with(self.token) if p != self.bystander.pid]
        if leftovers:
            found.append(f"{len(leftovers)} processes of the attack outlived its run")
        groups = _run_cgroups() - self.cgroups_before
        if groups:
            found.append(f"{len(groups)} per-run cgroups were left behind")
        return found

    def gold_text(self) -> str:
        """A gold answer marked with the range's token, so a copy of it is recognised anywhere."""
        return GOLD.replace("}}", f'}}, "range": "{self.token}"}}')

    def _checkout(self, folder: Path) -> Path:
        script = folder / "catalog/camels/t1/reproduce.py"
        script.parent.mkdir(parents=True)
        script.write_text(f"print({self.gold_text()!r})\n")
        for path in [folder, *script.parents]:
            if path.is_relative_to(folder):
                path.chmod(0o755)
        return script

    def _listen(self) -> None:
        tcp = socket.create_server(("127.0.0.1", 0))
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", 0))
        abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        abstract.bind(f"\0scibench-{self.token}")
        abstract.listen(4)
        path = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        path.bind(str(self.root / "host.sock"))
        os.chmod(self.root / "host.sock", 0o777)
        path.listen(4)
        self._named_sockets = {"tcp": tcp, "udp": udp, "abstract unix": abstract, "unix": path}
        for sock in self._named_sockets.values():
            sock.setblocking(False)
            self._sockets.append(sock)
        self.tcp_port, self.udp_port = tcp.getsockname()[1], udp.getsockname()[1]

    def _start_bystander(self) -> subprocess.Popen:
        identity = sandbox_identity()
        prefix = (["setpriv", f"--reuid={identity.uid}", f"--regid={identity.gid}", "--clear-groups"]
                  if identity.as_root else [])
        return subprocess.Popen([*prefix, "sleep", "3600"], start_new_session=True)

    @staticmethod
    def _read_settings() -> dict[str, str]:
        values = {}
        for path in HOST_SETTINGS:
            with contextlib.suppress(OSError):
                values[path] = Path(path).read_text()
        return values


def _run_cgroups() -> set[Path]:
    """The per-run cgroups of this harness process that exist now."""
    if os.geteuid() != 0:
        return set()
    found = set()
    for top, dirs, _ in os.walk("/sys/fs/cgroup", onerror=lambda error: None):
        found |= {Path(top) / name for name in dirs if name.startswith(f"scibench-{os.getpid()}-")}
    return found


def _live_processes_with(token: str) -> list[int]:
    pids = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
            state = (cmdline.parent / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if any(token.encode() in arg for arg in argv) and state != "Z":
            pids.append(int(cmdline.parent.name))
    return pids
