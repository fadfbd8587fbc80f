"""Warm pools (stages/sandbox/warm.py, pools.py): real runs in one warm sandbox, each seeing only its own files.

Each test runs real programs in a real pool; the attacking runs try to leave something for the next
run (files in every writable place, a daemon, a killed zygote) or to reach what they must not.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest
from scibench_testing.limits import limits_with

from stages.sandbox import pools, run_sandboxed, warm
from stages.sandbox.workspace import make_workspace, remove_workspace

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")

PROJECT = Path(__file__).resolve().parents[2]
LIMITS = limits_with(wall_seconds=20, cpu_seconds=20, memory_bytes=2 << 30, address_space_bytes=2 << 30)


@pytest.fixture
def spec(tmp_path: Path) -> warm.PoolSpec:
    yield warm.PoolSpec(LIMITS, (PROJECT.resolve(), tmp_path.resolve()), ("json", "statistics"))
    pools.close_all()


def query(tmp_path: Path, name: str, script: str, files: dict[str, str] | None = None) -> tuple[Path, Path]:
    """A public folder with `files` and an agent folder holding `main.py`."""
    public, agent = tmp_path / name / "public", tmp_path / name / "agent"
    public.mkdir(parents=True)
    agent.mkdir()
    for file, text in (files or {"x.txt": name}).items():
        (public / file).write_text(text)
    (agent / "main.py").write_text(script)
    return public, agent


def run(pool: warm.WarmPool, public: Path, agent: Path, prompt: str = "the prompt"):
    return pool.run(prompt, public, agent, "main.py", ("answer.json",), 1 << 20)


def cold_run(spec: warm.PoolSpec, public: Path, agent: Path):
    """The same program the cold way: a fresh workspace and sandbox of its own."""
    workspace = make_workspace("the prompt", public)
    try:
        return run_sandboxed(workspace, [sys.executable, "/agent/main.py"], limits=LIMITS, agent_dir=agent,
                             hidden=spec.hidden, extra_ro_binds=dict(spec.binds))
    finally:
        remove_workspace(workspace)


LEAVE_TRACES = """
import os, subprocess, pathlib
for place in ("/tmp/left", "/dev/shm/left", "work/left", "/scratch/left"):
    pathlib.Path(place).write_text("secret of run A")
subprocess.Popen(["sleep", "600"], start_new_session=True)
pathlib.Path("work/answer.json").write_text('{"run": "A"}')
"""

LOOK_AROUND = """
import json, os, pathlib, sys
seen = {
    "cwd": os.getcwd(), "here": sorted(os.listdir(".")), "data": sorted(os.listdir("data")),
    "prompt": pathlib.Path("prompt.md").read_text(), "pool": sorted(os.listdir("/pool")),
    "scratch": sorted(os.listdir("/scratch")), "tmp": os.listdir("/tmp"), "shm": os.listdir("/dev/shm"),
    "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "private": [os.path.exists(p) for p in PRIVATE], "uid": os.getuid(),
    "home": os.environ["HOME"], "file": __file__, "argv": sys.argv, "path0": sys.path[0],
}
pathlib.Path("work/answer.json").write_text(json.dumps(seen))
"""


def test_a_run_sees_only_its_own_files_and_nothing_an_earlier_run_left(spec, tmp_path: Path):
    private = tmp_path / "private"
    private.mkdir()
    (private / "gold.json").write_text("{}")
    a = query(tmp_path, "a", LEAVE_TRACES)
    hidden = [str(private), str(private / "gold.json"), str(PROJECT / "params.yaml")]
    b = query(tmp_path, "b", f"PRIVATE = {hidden!r}\n" + LOOK_AROUND, {"y.csv": "1", "z.csv": "2"})
    with pools.lease(spec) as pool:
        first = run(pool, *a)
        second = run(pool, *b, prompt="prompt of b")
    assert first.exit_code == 0 and first.files["answer.json"].data == b'{"run": "A"}'
    assert second.exit_code == 0, second.stderr
    seen = json.loads(second.files["answer.json"].data)
    assert seen == {
        "cwd": "/workspace", "here": ["data", "prompt.md", "work"], "data": ["y.csv", "z.csv"],
        "prompt": "prompt of b", "pool": ["agent", "data", "prompt.md"], "scratch": ["stderr", "stdout"],
        "tmp": [], "shm": [], "processes": [1, 2, seen["processes"][-1]],  # bwrap's init, the zygote, this run
        "private": [False, False, False], "uid": 65534 if os.geteuid() == 0 else os.geteuid(),
        "home": "/workspace/work", "file": "/agent/main.py", "argv": ["/agent/main.py"], "path0": "/agent",
    }


def test_exit_statuses_are_those_of_python_running_the_script(spec, tmp_path: Path):
    scripts = {
        "ok": ("print('out'); import sys; print('err', file=sys.stderr)", 0),
        "exit3": ("import sys; sys.exit(3)", 3),
        "message": ("raise SystemExit('stopped: bad data')", 1),
        "raises": ("raise ValueError('no column flow')", 1),
        "abort": ("import os; os.abort()", 128 + signal.SIGABRT),
    }
    with pools.lease(spec) as pool:
        results = {name: run(pool, *query(tmp_path, name, code)) for name, (code, _) in scripts.items()}
    assert {name: r.exit_code for name, r in results.items()} == {n: code for n, (_, code) in scripts.items()}
    assert (results["ok"].stdout, results["ok"].stderr) == ("out\n", "err\n")
    assert results["message"].stderr == "stopped: bad data\n"
    assert results["raises"].stderr.strip().splitlines()[-1] == "ValueError: no column flow"


def test_a_hanging_or_memory_hungry_run_ends_alone(spec, tmp_path: Path):
    hang = query(tmp_path, "hang", "while True: pass")
    hungry = query(tmp_path, "hungry", "x = bytearray(3 << 30)")
    fine = query(tmp_path, "fine", "open('work/answer.json', 'w').write('{}')")
    short = warm.PoolSpec(replace(LIMITS, wall_seconds=2), spec.hidden, spec.preload)
    with pools.lease(short) as pool:
        hung, after_hang = run(pool, *hang), run(pool, *fine)
        ate, after_eating = run(pool, *hungry), run(pool, *fine)
        zygote = pool.sandbox_pid
    assert (hung.exit_code, hung.timed_out, hung.limits_hit) == (None, True, ("wall",))
    assert (ate.exit_code, ate.stderr.strip().splitlines()[-1]) == (1, "MemoryError")
    assert after_hang.files["answer.json"].data == after_eating.files["answer.json"].data == b"{}"
    with pools.lease(short) as pool:
        assert pool.sandbox_pid == zygote  # the same pool served all four


KILL_THE_ZYGOTE = """
import os, pathlib
pathlib.Path('work/answer.json').write_text('{"a": 1}')
parent = os.getppid()
if b"zygote" in pathlib.Path(f"/proc/{parent}/cmdline").read_bytes():  # warm: the zygote, of the same uid
    os.kill(parent, 9)
"""


def test_a_run_that_kills_its_zygote_is_done_again_cold_and_the_pool_replaced(spec, tmp_path: Path):
    public, agent = query(tmp_path, "q", KILL_THE_ZYGOTE)
    result = pools.run_warm(spec, "p", public, agent, "main.py", ("answer.json",), 1 << 20)
    assert (result.exit_code, result.files["answer.json"].data) == (0, b'{"a": 1}')
    assert result.isolation.startswith("bwrap, uid")  # cold: a fresh sandbox of its own
    benign, agent = query(tmp_path, "r", "import pathlib; pathlib.Path('work/answer.json').write_text('2')")
    again = pools.run_warm(spec, "p", benign, agent, "main.py", ("answer.json",), 1 << 20)
    assert again.isolation.startswith("warm bwrap pool") and again.files["answer.json"].data == b"2"


def test_a_pool_killed_while_idle_is_replaced_not_used(spec, tmp_path: Path):
    public, agent = query(tmp_path, "q", "import pathlib; pathlib.Path('work/answer.json').write_text('1')")
    with pools.lease(spec) as pool:
        os.killpg(pool.proc.pid, signal.SIGKILL)
        pool.proc.wait()
    result = pools.run_warm(spec, "p", public, agent, "main.py", ("answer.json",), 1 << 20)
    assert result.isolation.startswith("warm bwrap pool") and result.files["answer.json"].data == b"1"
    with pools.lease(spec) as replacement:
        assert replacement is not pool and pool.proc is None  # the dead one was closed


def test_a_pool_outlives_the_thread_that_first_leased_it(spec, tmp_path: Path):
    """bwrap's --die-with-parent follows the starting thread: an executor's ended worker must not end its pools."""
    public, agent = query(tmp_path, "q", "import pathlib; pathlib.Path('work/answer.json').write_text('1')")
    with ThreadPoolExecutor(1) as executor:
        first = executor.submit(pools.run_warm, spec, "p", public, agent, "main.py", ("answer.json",), 1 << 20)
        assert first.result().isolation.startswith("warm bwrap pool")
    with pools.lease(spec) as pool:
        result = run(pool, public, agent)
        assert pool.alive() and result.files["answer.json"].data == b"1"


def test_warm_and_cold_runs_hand_in_the_same_bytes(spec, tmp_path: Path):
    script = ("import json, pathlib, random, statistics\n"
              "v = [random.Random(0).gauss(0, 1) for _ in range(1000)]\n"
              "pathlib.Path('work/answer.json').write_text(json.dumps({'x': statistics.stdev(v), "
              "'data': sorted(p.name for p in pathlib.Path('data').iterdir())}))\n")
    public, agent = query(tmp_path, "q", script)
    with pools.lease(spec) as pool:
        warm_result = run(pool, public, agent)
    cold = cold_run(spec, public, agent)
    assert cold.exit_code == warm_result.exit_code == 0
    assert warm_result.files["answer.json"].data == cold.files["answer.json"].data


def test_a_pool_binds_the_extra_folders_a_cold_run_binds_and_preloads_from_them(spec, tmp_path: Path):
    library = tmp_path / "library"
    library.mkdir()
    (library / "shared_measure.py").write_text("def twice(x):\n    return 2 * x\n")
    script = ("import json, os, pathlib, sys\nsys.path.append('/library')\nimport shared_measure\n"
              "pathlib.Path('work/answer.json').write_text(json.dumps({'x': shared_measure.twice(21), "
              "'writable': os.access('/library', os.W_OK), 'files': os.listdir('/library')}))\n")
    public, agent = query(tmp_path, "q", script)
    bound = replace(spec, binds=((library, "/library"),))
    with pools.lease(bound) as pool:
        warm_result = run(pool, public, agent)
    cold = cold_run(bound, public, agent)
    assert warm_result.exit_code == cold.exit_code == 0, warm_result.stderr
    assert json.loads(warm_result.files["answer.json"].data) == {"x": 42, "writable": False,
                                                               "files": ["shared_measure.py"]}
    assert warm_result.files["answer.json"].data == cold.files["answer.json"].data
    with pytest.raises(ValueError, match="extra bind '/pool': not a new top-level name"):
        with pools.lease(replace(spec, binds=((library, "/pool"),))):
            pass


def test_warnings_and_tracebacks_name_the_paths_of_a_cold_run(spec, tmp_path: Path):
    public, agent = query(tmp_path, "q", "import warnings\nwarnings.warn('thin data')\nimport helper\n")
    (agent / "helper.py").write_text("def fail():\n    raise KeyError('flow')\nfail()\n")
    with pools.lease(spec) as pool:
        warm_result = run(pool, public, agent)
    cold = cold_run(spec, public, agent)
    assert warm_result.exit_code == cold.exit_code == 1
    assert "/agent/main.py:2: UserWarning: thin data" in cold.stderr
    assert 'File "/agent/helper.py", line 2, in fail' in cold.stderr
    assert warm_result.stderr == cold.stderr

def test_imports_are_read_from_the_scripts_without_their_own_modules(tmp_path: Path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helper.py").write_text("import numpy as np\nfrom scipy import stats\n")
    (tmp_path / "task.py").write_text("from __future__ import annotations\nimport helper, os.path\n"
                                      "def f():\n    from sklearn.linear_model import Ridge\n"
                                      "from .x import y\n")
    assert pools.imports_of([tmp_path]) == ("numpy", "os.path", "scipy", "sklearn.linear_model")


HOST_PROBE = """
import json, os, sys
exchange = sys.argv[1]
tried = {}
for name, attempt in [("list", lambda: os.listdir(exchange)),
                      ("read_script", lambda: open(os.path.join(exchange, "agent", "main.py")).read()),
                      ("plant_file", lambda: open(os.path.join(exchange, "planted.py"), "w").write("x")),
                      ("replace_script", lambda: open(os.path.join(exchange, "agent", "main.py"), "w").write("x"))]:
    try:
        attempt()
        tried[name] = "done"
    except OSError as error:
        tried[name] = type(error).__name__
print(json.dumps(tried))
"""


HOST_PYTHON = shutil.which("python3", path="/usr/bin:/bin")  # one other users may run (the venv's may sit in /root)


@pytest.mark.skipif(os.geteuid() != 0 or HOST_PYTHON is None,
                    reason="other host users exist only when the harness runs as root; needs a system python3")
def test_other_host_users_cannot_read_or_change_a_run_in_flight(spec, tmp_path: Path):
    """The exchange folder holds the run's files while it runs: root:nogroup 0750, files read-only.

    A host process of another user may not even list it; one running as the sandbox's own user
    (nobody:nogroup, as a host daemon might) may read what the run sees (public files and the
    annotator script, both in the repository) but neither plant a file nor rewrite the script.
    """
    import subprocess
    import threading
    import time

    public, agent = query(tmp_path, "q", "import time, pathlib\ntime.sleep(3)\n"
                                         "pathlib.Path('work/answer.json').write_text('{\"ran\": \"own\"}')\n")
    with pools.lease(spec) as pool:
        result = {}
        thread = threading.Thread(target=lambda: result.update(r=run(pool, public, agent)))
        thread.start()
        deadline = time.monotonic() + 60
        while not (pool.exchange / "agent").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        tried = {uid: json.loads(subprocess.run([HOST_PYTHON, "-c", HOST_PROBE, str(pool.exchange)], user=uid,
                                                group=uid, extra_groups=[], capture_output=True, text=True,
                                                check=True).stdout)
                 for uid in (12345, 65534)}
        thread.join()
    assert tried == {
        12345: {"list": "PermissionError", "read_script": "PermissionError", "plant_file": "PermissionError",
                "replace_script": "PermissionError"},
        65534: {"list": "done", "read_script": "done", "plant_file": "PermissionError",
                "replace_script": "PermissionError"},
    }
    assert result["r"].files["answer.json"].data == b'{"ran": "own"}'


def test_a_stopped_harness_starts_no_pool_and_keeps_no_run_that_ended_after_the_signal(spec, tmp_path: Path,
                                                                                      monkeypatch):
    """After a stop signal (`debris.stopping()`), nothing a pool returns is a result, and no pool starts."""
    from stages.sandbox import debris

    public, agent = query(tmp_path, "q", "import pathlib; pathlib.Path('work/answer.json').write_text('{}')")
    with pools.lease(spec) as pool:
        monkeypatch.setattr(debris, "_stopping", True)
        with pytest.raises(warm.PoolDied, match="stopped by a signal"):
            run(pool, public, agent)
    with pytest.raises(warm.PoolDied, match="stopped by a signal"):
        warm.WarmPool(spec)
    refused = pools.run_warm(spec, "p", public, agent, "main.py", ("answer.json",), 1 << 20)
    assert (refused.exit_code, refused.infra_error) == (None, "the harness was stopped by a signal before the run")
    monkeypatch.setattr(debris, "_stopping", False)
    with pools.lease(spec) as pool:
        slow = query(tmp_path, "slow", "import time, pathlib\ntime.sleep(1)\n"
                                       "pathlib.Path('work/answer.json').write_text('{}')\n")
        import threading

        threading.Timer(0.3, lambda: monkeypatch.setattr(debris, "_stopping", True)).start()
        ended = run(pool, *slow)
    assert ended.infra_error == "the harness was stopped by a signal during the run"


def test_threads_reading_imports_at_once_parse_one_file_at_a_time(tmp_path, monkeypatch):
    """CPython 3.11 corrupts its AST state when two threads parse at once (python/cpython#106905):
    it failed a build's first warm heuristic queries, two threads building their first pools at once."""
    import ast
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    (tmp_path / "a.py").write_text("import numpy\n")
    inside, most, lock, parse = [0], [0], threading.Lock(), ast.parse

    def watched(*args, **kwargs):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.01)
        try:
            return parse(*args, **kwargs)
        finally:
            with lock:
                inside[0] -= 1

    monkeypatch.setattr(pools.ast, "parse", watched)
    with ThreadPoolExecutor(8) as pool:
        found = set(pool.map(lambda _: pools.imports_of([tmp_path]), range(16)))
    assert (found, most[0]) == ({("numpy",)}, 1)
