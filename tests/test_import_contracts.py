"""The import contracts: product (stages/) apart from orchestration and tooling, in layers, with no circles.

`lint-imports` checks the contracts in pyproject.toml's `[tool.importlinter]` (stages never imports
the flows or the benchmarks; the layers of stages' packages; no circle among the packages of
stages at any depth). grimp then checks the finer rule the layers cannot state: no two modules of
stages import each other, directly or round a loop, counting imports made inside functions.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("stages", "flows", "benchmarks")
FORBIDDEN = "stages is the product library: it never imports the flows or the benchmarks"


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """`lint-imports` on the checkout at `root`: its own packages, whatever the venv has installed."""
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    return subprocess.run([sys.executable, "-c", code, "--no-cache", "--no-logo", "pyproject.toml"],
                          cwd=root, capture_output=True, text=True, timeout=300)


def module_circles(package: str) -> list[list[str]]:
    """The groups of `package`'s modules that import each other round a loop (Tarjan, iterative)."""
    graph = grimp.build_graph(package, cache_dir=None)
    edges = {module: sorted(graph.find_modules_directly_imported_by(module)) for module in graph.modules}
    order, low, stack, on_stack, circles = {}, {}, [], set(), []
    for start in sorted(edges):
        if start in order:
            continue
        work = [(start, iter(edges[start]))]
        order[start] = low[start] = len(order)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in order:
                    order[target] = low[target] = len(order)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(edges[target])))
                elif target in on_stack:
                    low[node] = min(low[node], order[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == order[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    circles.append(sorted(group))
    return circles


def test_the_contracts_hold() -> None:
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_no_two_stages_modules_import_each_other_even_inside_functions() -> None:
    assert module_circles("stages") == []


def test_a_stages_module_that_imports_the_flows_breaks_the_contracts(tmp_path: Path) -> None:
    for name in PACKAGES:
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    hashing = tmp_path / "stages" / "hashing.py"
    hashing.write_text(hashing.read_text() + "\n\ndef _orchestrate():\n    import flows.evaluate  # noqa: F401\n")
    done = lint_imports(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{FORBIDDEN} BROKEN" in " ".join(done.stdout.split())
    assert "stages.hashing -> flows.evaluate" in done.stdout


@pytest.mark.parametrize(("modules", "circles"), [
    ({"a": "from pkg import b\n", "b": "def f():\n    from pkg import a\n"}, [["pkg.a", "pkg.b"]]),
    ({"a": "from pkg import b\n", "b": "from pkg import c\n", "c": "import pkg.a\n", "d": "import pkg.a\n"},
     [["pkg.a", "pkg.b", "pkg.c"]]),
    ({"a": "from pkg import b\n", "b": ""}, []),
])
def test_a_circle_is_found_through_a_function_and_round_a_loop(tmp_path: Path, monkeypatch, modules, circles) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    for name, text in modules.items():
        (tmp_path / "pkg" / f"{name}.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert module_circles("pkg") == circles
