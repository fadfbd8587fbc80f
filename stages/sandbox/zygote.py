"""The warm interpreter inside a warm sandbox: imports the scientific stack once, forks one child per run.

This file runs *inside* the sandbox (stages/sandbox/warm.py starts it and hands it over as
`/warm/zygote.py`); it imports nothing of the project. Usage:

    python -S /warm/zygote.py <command fd> <reply fd> <modules to preload, JSON list> <environment, JSON>

It imports the modules, replies `{"ready": ...}`, then serves one command at a time, one JSON
line each way (and the commands of a query's kernel, `cells.py`):

    {"run": n, "script": ..., "args": [...], "env": {...}, "wall": s, "cpu": s, "memory": bytes,
     "file_size": bytes}
    -> {"run": n, "status": <exit status or null>, "signal": <signal or null>, "timed_out": bool}

A run sees the paths a cold run sees. Its files are in `/pool` (read-only: `prompt.md`, `data/`,
`agent/`, placed there by the harness for this run alone; `/agent` links to `/pool/agent`); its
working directory is `/workspace`, holding `prompt.md` and `data` (links to those) and an empty
`work/`; its stdout and stderr go to `/scratch/stdout` and `/scratch/stderr`. The child is forked
from this process (so it starts with the stack imported), makes its own session, lowers its
rlimits to the run's, offers itself first to the OOM killer, and runs the script as `__main__`
with `runpy` (its arguments in `sys.argv`), exiting as `python <script> <args>` would. Before the
next run, everything the last one left is gone: every other process of the sandbox is killed,
and `/workspace`, `/scratch`, `/tmp` and `/dev/shm` are emptied.
"""

import atexit
import importlib
import json
import os
import resource
import runpy
import select
import shutil
import signal
import site
import sys
import time
import traceback

POOL, WORKSPACE, SCRATCH = "/pool", "/workspace", "/scratch"
EMPTIED = (WORKSPACE, SCRATCH, "/tmp", "/dev/shm")


def preload(modules: list[str]) -> tuple[list[str], list[str]]:
    """Import what the runs will import; a module that fails is left for the run to fail on."""
    loaded, failed = [], []
    for name in modules:
        try:
            importlib.import_module(name)
            loaded.append(name)
        except Exception:  # noqa: BLE001 - any import error is the run's to report, not ours
            failed.append(name)
    return loaded, failed


def empty(folder: str) -> None:
    """Remove what is inside `folder` (the sandbox's own tmpfs mounts)."""
    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            try:
                os.unlink(entry.path)
            except OSError:
                pass


def kill_others() -> None:
    """Kill every other process of the sandbox: all are this user's but PID 1, which is root's."""
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass


def clear_before_run() -> None:
    """Nothing of an earlier run stays: no process, nothing in its writable places."""
    kill_others()
    for folder in EMPTIED:
        empty(folder)


def enter(command: dict, closing: list[int]) -> None:
    """Become the run (or the kernel): its own session, signals, rlimits, stdin, cwd and environment."""
    for fd in closing:
        os.close(fd)
    os.setsid()
    for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGPIPE", "SIGCHLD"):
        signal.signal(getattr(signal, name), signal.SIG_DFL)
    with open("/proc/self/oom_score_adj", "w") as adj:
        adj.write("1000")
    limits = {resource.RLIMIT_CPU: (command["cpu"], command["cpu"] + 1),
              resource.RLIMIT_AS: (command["memory"], command["memory"]),
              resource.RLIMIT_FSIZE: (command["file_size"], command["file_size"]),
              resource.RLIMIT_CORE: (0, 0)}
    for kind, (soft, hard) in limits.items():
        ceiling = resource.getrlimit(kind)[1]
        if ceiling != resource.RLIM_INFINITY:
            soft, hard = min(soft, ceiling), min(hard, ceiling)
        resource.setrlimit(kind, (soft, hard))
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    redirect("stdout", "stderr")
    os.chdir(WORKSPACE)
    os.environ.clear()
    os.environ.update(command["env"])


def redirect(stdout: str, stderr: str) -> None:
    """Send fd 1 and 2 to fresh files of these names in /scratch."""
    for fd, name in ((1, stdout), (2, stderr)):
        target = os.open(f"{SCRATCH}/{name}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)


def child(command: dict, closing: list[int]) -> None:
    """The forked run: never returns."""
    code = 1
    try:
        enter(command, closing)
        sys.argv = [command["script"], *command["args"]]
        sys.path[0] = os.path.dirname(command["script"])
        try:
            runpy.run_path(command["script"], run_name="__main__")
            code = 0
        except SystemExit as exit_:
            code = exit_status(exit_)
        except BaseException as error:  # noqa: BLE001 - reported as the interpreter reports it
            code = report(error, command["script"])
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code & 0xFF)


def exit_status(exit_: SystemExit) -> int:
    """The exit status `sys.exit(code)` gives a process (a message goes to stderr, status 1)."""
    if exit_.code is None or isinstance(exit_.code, int):
        return exit_.code or 0
    print(exit_.code, file=sys.stderr)
    return 1


def report(error: BaseException, filename: str) -> int:
    """Print the traceback from the first frame in `filename` on, as the interpreter shows it; 1."""
    frames = error.__traceback__
    while frames is not None and frames.tb_frame.f_code.co_filename != filename:
        frames = frames.tb_next
    traceback.print_exception(type(error), error, frames or error.__traceback__)
    return 1


def prepare() -> None:
    """The run's fresh workspace (see the module docstring)."""
    os.mkdir(f"{WORKSPACE}/work", 0o700)
    os.symlink(f"{POOL}/prompt.md", f"{WORKSPACE}/prompt.md")
    os.symlink(f"{POOL}/data", f"{WORKSPACE}/data")


def wait(pid: int, seconds: float) -> tuple[int, bool]:
    """The child's wait status, killing its session at the wall clock; (status, timed out)."""
    handle = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([handle], [], [], seconds)
    finally:
        os.close(handle)
    if not ready:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, status = os.waitpid(pid, 0)
    return status, not ready


def serve(commands: int, replies: int) -> None:
    """Answer commands until the harness closes the command pipe."""
    reader = os.fdopen(commands, "r", encoding="utf-8")
    supervisor = None
    for line in reader:
        command = json.loads(line)
        if {"kernel", "cell", "end"} & command.keys():  # a query's kernel (cells.py)
            if supervisor is None:
                import cells

                supervisor = cells.Supervisor(sys.modules[__name__], [commands, replies])
            serve_kernel = supervisor.start if "kernel" in command else (
                supervisor.cell if "cell" in command else supervisor.end)
            os.write(replies, (json.dumps(serve_kernel(command)) + "\n").encode())
            continue
        clear_before_run()  # the harness took the last run's files before it sent this command
        n = command["run"]
        prepare()
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            child(command, [commands, replies])
        status, timed_out = wait(pid, command["wall"])
        kill_others()  # what the run left running; its files stay for the harvest
        reply = {"run": n, "timed_out": timed_out, "seconds": round(time.monotonic() - started, 3),
                 "status": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                 "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None}
        os.write(replies, (json.dumps(reply) + "\n").encode())


def enter_environment(environment: dict) -> None:
    """What `site` does for the harness's virtual environment, but run its .pth hooks.

    The zygote starts as `python -S`: the project's editable-install finder, run by a .pth hook at
    every start, cost ~20 ms of CPU, a third of a query's kernel, and serves nothing where the
    project is hidden. `environment`: the harness's prefixes and site-packages directories.
    """
    sys.prefix, sys.exec_prefix = environment["prefix"], environment["exec_prefix"]
    sys.path.extend(path for path in environment["site_packages"] if path not in sys.path)
    site.setquit()  # exit() and quit()
    site.setcopyright()
    site.sethelper()


def main() -> None:
    """See the module docstring."""
    commands, replies = int(sys.argv[1]), int(sys.argv[2])
    enter_environment(json.loads(sys.argv[4]))
    loaded, failed = preload(json.loads(sys.argv[3]))
    os.write(replies, (json.dumps({"ready": True, "preloaded": loaded, "failed": failed}) + "\n").encode())
    serve(commands, replies)


if __name__ == "__main__":
    main()
