"""The proxy as a service around each sandboxed attempt of one query, and what it reports.

Per attempt: a fresh host folder holding the proxy's Unix socket `llm.sock`, reachable by the sandbox
user alone (folder 0700 and socket 0600, owned by that user), bound read-only at `/llm`; a fresh
proxy with the query's whole budget. After the attempt, the report gives the journal record its
usage (every call, totals per role), tokens and cost, the agent's working time (the run's wall
time minus the time spent waiting on a failing or rate-limiting model API), the bound the agent
stopped at, and the model API's failure as an infrastructure error.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from stages.evaluation.agents.llm import client, server, usage
from stages.evaluation.agents.llm.proxy import Proxy, Settings
from stages.evaluation.journal import ModelCall, UsageTotals
from stages.evaluation.program import Attempt, Binding, ServiceReport
from stages.sandbox import debris
from stages.sandbox.command import sandbox_identity

MOUNT = "/llm"
TOKEN_ENV = "SCIBENCH_LLM_TOKEN"  # an in-process loop's key to its proxy (never set in a sandbox)
SOCKET = "llm.sock"
EXECUTION = "persistent sandbox per query"  # a command agent's
LOOP_EXECUTION = "loop in the harness, persistent kernel per query"  # a built-in strategy's
# Bounds the loop reports reaching on its last stdout line (`scibench-llm stop: <reason>`).
LOOP_LIMITS = ("max_turns", "max_rounds", "wall_budget", "finish_length", "token_budget",
               "request_rejected")
STOP_LINE = re.compile(r"^scibench-llm stop: ([a-z_]+)$", re.MULTILINE)


class ProxyService:
    """One query's model proxy: a session per attempt, a report after each.

    `in_process`: the agent's loop runs in the harness (`AgentProgram.loop`) and reaches the proxy
    through the shared client (client.py), by the token the session puts in `TOKEN_ENV`; otherwise
    the proxy serves a Unix socket bound into the sandbox.
    """

    def __init__(self, settings: Settings, prices_version: str | None, in_process: bool = False):
        self.settings = settings
        self.prices_version = prices_version
        self.in_process = in_process
        self._proxy: Proxy | None = None
        self._discarded: list[UsageTotals] = []

    @contextlib.contextmanager
    def session(self) -> Iterator[Binding]:
        """Serve a fresh proxy on a fresh socket for one attempt; stop it and remove the folder."""
        self._proxy = proxy = Proxy(self.settings)
        if self.in_process:
            try:
                with client.registered(proxy) as token:
                    yield Binding(env={TOKEN_ENV: token})
            finally:
                proxy.close()
            return
        folder = Path(tempfile.mkdtemp(prefix=debris.temp_prefix("llm")))
        try:
            httpd, thread = server.serve(folder / SOCKET, proxy)
            try:
                _grant(folder)
                yield Binding(binds={folder: MOUNT}, env={"SCIBENCH_LLM_SOCKET": f"{MOUNT}/{SOCKET}"})
            finally:
                httpd.shutdown()
                httpd.server_close()
                thread.join(timeout=5)
        finally:
            proxy.close()
            shutil.rmtree(folder, ignore_errors=True)

    def report(self, attempt: Attempt) -> ServiceReport:
        """The attempt's usage and limits; its usage is set aside when the attempt is retried."""
        proxy = self._proxy
        calls = list(proxy.calls) if proxy else []
        infra_error = proxy.infra_error if proxy else None
        summary = usage.summarize(calls, self.prices_version, usage.combine(self._discarded))
        if infra_error is not None or attempt.infra_error is not None:
            self._discarded.append(summary.total)
        total = summary.total
        waited = proxy.waited_seconds if proxy else 0.0
        reported = [call.model for call in calls if call.model]
        return ServiceReport(infra_error=infra_error, fields={
            "usage": summary,
            "tokens": (total.prompt_tokens or 0) + (total.completion_tokens or 0),
            "cost_usd": total.cost_usd,
            "agent_seconds": round(max(0.0, attempt.wall_seconds - waited), 3),
            "agent_limit": agent_limit(calls, attempt.stdout),
            "execution": LOOP_EXECUTION if self.in_process else EXECUTION,
            "model_reported": reported[-1] if reported else None,
        })


def agent_limit(calls: list[ModelCall], stdout: str) -> str | None:
    """The bound the agent stopped at: a proxy refusal, else the loop's own report, else a cut reply.

    The proxy's refusals are the harness's own facts; the loop's stop line comes from the sandbox
    and is taken only when it names a known bound.
    """
    refused = next((call.refused for call in calls if call.refused), None)
    if refused is not None:
        return refused
    stops = STOP_LINE.findall(stdout)
    if stops and stops[-1] in LOOP_LIMITS:
        return stops[-1]
    answered = [call for call in calls if call.refused is None]
    if answered and answered[-1].finish_reason == "length":
        return "finish_length"
    return None


def _grant(folder: Path) -> None:
    """Let the sandbox user, and only it, reach the socket."""
    identity = sandbox_identity()
    for path, mode in ((folder, 0o700), (folder / SOCKET, 0o600)):
        if os.geteuid() == 0:
            os.chown(path, identity.uid, identity.gid)
        os.chmod(path, mode)
