"""The flows' Prefect API, best effort: a run's work and outputs never depend on it.

Every entry point runs its flows inside `prefect_api()` and through `run_flow`, and creates its
artifacts through `publish`. When the API errs (5xx, refused connections, timeouts) or its server
dies mid-run, the flow's work goes on, its outputs are written, the process exits 0, and one
warning on stderr names what the Prefect UI lacks. What Prefect offers for this, and what is added:

- Client retries: Prefect's own (`PREFECT_CLIENT_MAX_RETRIES`, backoff 2, 4, 8, ... s). Its
  default of 5 waits ~62 s per request once a server is gone, ~250 s over a run's last requests;
  `prefect_api()` sets 2 (~6 s) unless the variable is set.
- Logs (Prefect's API log handler) and task run states (events over a websocket) are sent by
  background workers that report a failure and drop it, never raising (logs obey the client
  retries; `PREFECT_LOGGING_TO_API_ENABLED=false` turns them off). Events do not: their client
  tries each event ~7 s, so `point_at` gives the events worker a client that tries 4 times
  without waiting, through Prefect's own client override. `ApiNoise`, a logging filter, turns
  the events worker's full dump of every lost event and the engine's traceback of a failed final
  state into a note for the warning; the workers are drained (bounded) before it is printed.
- Artifacts: `create_*_artifact` raises on an API error; `publish` catches and notes it.
- Flow run states: when the final state update fails, after the flow's body has returned, the
  engine raises and the return value is lost (Prefect has no switch; PrefectHQ/prefect#22426).
  `run_flow` keeps the body's return value and returns it. A flow whose API fails before its
  body runs (a server that is down, or died during an earlier flow of this process) runs again
  on a temporary server of this process; an error inside the body is raised: the work is not done.
- No API configured: the flows run on this process's own temporary server (`flows.temporary_server`),
  which the kernel kills with this process.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
from prefect.context import refresh_global_settings_context
from prefect.events.clients import PrefectEventsClient
from prefect.events.worker import EventsWorker
from prefect.exceptions import ObjectNotFound
from prefect.flows import Flow
from prefect.logging.handlers import APILogWorker
from prefect.settings import get_current_settings

from flows.temporary_server import TemporaryServer, start_temporary_server, stop

R = TypeVar("R")
API_ERRORS = (httpx.HTTPError, ObjectNotFound)  # httpx.HTTPError covers 5xx, refusals and timeouts
CLIENT_RETRIES = "2"
EVENT_RECONNECTS = 3
DRAIN_SECONDS = 20  # for the logs and events still queued when the flows are done


@dataclass
class Unrecorded:
    """What this process could not record in the Prefect API: items, the first error, where."""

    items: list[str] = field(default_factory=list)
    error: str = ""
    api_url: str = ""
    unreachable: bool = False  # the server did not answer at all
    server: TemporaryServer | None = None


STATE = Unrecorded()  # this process's, reset by each `prefect_api()`


@contextlib.contextmanager
def prefect_api() -> Iterator[None]:
    """Bounded client retries and, without a configured API, this process's temporary server.

    On exit: the logs and events still queued are sent (bounded), the temporary server stops, and
    the warning naming what could not be recorded is printed to stderr.
    """
    global STATE
    STATE = Unrecorded()
    saved = {key: os.environ.get(key) for key in ("PREFECT_CLIENT_MAX_RETRIES", "PREFECT_API_URL")}
    os.environ.setdefault("PREFECT_CLIENT_MAX_RETRIES", CLIENT_RETRIES)
    refresh_global_settings_context()
    noise = ApiNoise()
    for name in NOISY_LOGGERS:
        logging.getLogger(name).addFilter(noise)
    finished = False
    try:
        if (url := get_current_settings().api.url) is None:
            use_temporary_server()
        else:
            point_at(url)
        yield
        finished = True
    finally:
        drain_workers()
        if STATE.server is not None:
            stop(STATE.server.process)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        refresh_global_settings_context()
        EventsWorker.set_client_override(None)
        for name in NOISY_LOGGERS:
            logging.getLogger(name).removeFilter(noise)
        if warning := unrecorded_warning(STATE, finished):
            # on a line of its own: Prefect's report of a failed log upload ends without a newline
            print(f"\n{warning}", file=sys.stderr)


def point_at(url: str) -> None:
    """Point the flows' API client and their events at `url` (Prefect Cloud keeps its own events client).

    Prefect's events client (task run states) tries 11 times, ~7 s, per event once its server is
    gone, one event after another: minutes for a large run whose server died. Here it tries 4
    times without waiting, through Prefect's own override of the events worker's client.
    """
    os.environ["PREFECT_API_URL"] = url
    refresh_global_settings_context()
    if not url.startswith(get_current_settings().cloud.api_url):
        EventsWorker.set_client_override(PrefectEventsClient, api_url=url, reconnection_attempts=EVENT_RECONNECTS)


class ApiNoise(logging.Filter):
    """Prefect's own reports of a failing API, shortened: the warning at the end names what it cost.

    The engine logs a failed final state update as an error with its traceback although the run's
    work is done (one warning line instead); the events worker logs each event it could not send
    in full, with a connection warning each time (noted here, the first warning kept).
    """

    def __init__(self) -> None:
        super().__init__()
        self.events_warned = False

    def filter(self, record: logging.LogRecord) -> bool:
        """Shorten or drop a record about the failing API; pass every other record."""
        if record.exc_info and isinstance(record.exc_info[1], API_ERRORS):
            record.msg, record.args = f"the Prefect API failed: {record.exc_info[1]!r}", ()
            record.exc_info, record.exc_text = None, None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        elif record.msg == "Service %r failed to process item %r" and record.args[0] == "EventsWorker":
            note("task run states sent while it did not answer")
            return False
        elif str(record.msg).startswith("Unable to connect to %r"):
            seen, self.events_warned = self.events_warned, True
            return not seen
        return True


NOISY_LOGGERS = ("prefect.flow_runs", "prefect._internal.concurrency", "prefect.events.clients")


def run_flow(flow: Flow[..., R], *args: Any, **kwargs: Any) -> R:
    """Call `flow`; an API error after its body returned only costs the UI its final state.

    Raises:
        The body's own errors, and API errors raised inside the body (its work is not done).
    """
    body = Body()
    call = flow.with_options()
    call.fn = body.wrap(flow.fn)
    try:
        return call(*args, **kwargs)
    except Exception as error:
        if (cause := api_error(error)) is None:
            raise
        if body.returned:
            note(f"the final state of the {flow.name!r} flow run", cause)
            return body.value
        if body.started or STATE.server is not None:
            raise
        note(f"the {flow.name!r} flow run (it ran on a temporary server instead)", cause)
    use_temporary_server()
    return run_flow(flow, *args, **kwargs)


def publish(what: str, create: Callable[..., Any], **kwargs: Any) -> Any:
    """Create an artifact with `create(**kwargs)` and return what it returns (its id).

    An API error is noted as `what`, not raised, and None is returned.
    """
    try:
        return create(**kwargs)
    except Exception as error:
        if (cause := api_error(error)) is None:
            raise
        note(what, cause)
        return None


def api_error(error: BaseException) -> BaseException | None:
    """The API error `error` is or was raised from (Prefect wraps some, e.g. its version check)."""
    while error is not None and not isinstance(error, API_ERRORS):
        error = error.__cause__
    return error


@dataclass
class Body:
    """Whether a flow's function started and returned, and its return value.

    The engine loses the value when its final state update fails; this keeps it.
    """

    started: bool = False
    returned: bool = False
    value: Any = None

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn`, recording here; with fn's signature, its annotations resolved in fn's module."""
        @functools.wraps(fn)
        def body(*args: Any, **kwargs: Any) -> Any:
            self.started = True
            self.value = fn(*args, **kwargs)
            self.returned = True
            return self.value

        body.__signature__ = inspect.signature(fn, eval_str=True)  # Prefect validates parameters by it
        return body


def note(what: str, error: BaseException | None = None) -> None:
    """Remember that `what` could not be recorded, and the first error (for the warning)."""
    STATE.items.append(what)
    STATE.api_url = STATE.api_url or str(get_current_settings().api.url)
    if error is not None:
        STATE.unreachable |= isinstance(error, httpx.TransportError)  # the logs queued meanwhile were lost too
        STATE.error = STATE.error or f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else '-'}"


def unrecorded_warning(state: Unrecorded, finished: bool) -> str | None:
    """The one warning naming what the Prefect UI lacks; None when everything was recorded."""
    if not state.items:
        return None
    lost = ["logs sent while it did not answer"] if state.unreachable else []
    outcome = " The run's own work is done and its outputs are written." if finished else ""
    why = f" ({state.error})" if state.error else ""
    return (f"WARNING: the Prefect API at {state.api_url} failed{why}. Not recorded in the Prefect UI:"
            f" {'; '.join(dict.fromkeys(state.items + lost))}.{outcome}")


def use_temporary_server() -> None:
    """Start this process's temporary server (once) and point the flows at it."""
    if STATE.server is None:
        STATE.server = start_temporary_server()
    point_at(STATE.server.api_url)
    print(f"flow runs report to a temporary Prefect server at {STATE.server.api_url} (it stops with this"
          " process)", file=sys.stderr)


def drain_workers() -> None:
    """Send the logs and task run events still queued, waiting at most DRAIN_SECONDS for each."""
    for worker in (APILogWorker, EventsWorker):
        with contextlib.suppress(Exception):  # a worker that never started has nothing to send
            worker.drain_all(timeout=DRAIN_SECONDS)
