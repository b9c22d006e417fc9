"""The folders of ``functions/`` import downward only, and the server loads none of the tooling; the tests' helpers
likewise.

The allowed directions are written down in ``docs/architecture.md`` ("Layers") and, for the tests, in
``docs/testing.md`` ("The harness"); this test is their enforcement. A new import that runs upward, or between two
kinds that do not compose each other, fails here with the file and the import named.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from fixtures.tooling import REPO

PACKAGE = REPO / "functions"

# Each folder (or top-level module) and the ones it may import. Layers, top down: tooling -> runtime (fn, serve)
# -> the kinds' registry -> the kinds -> xrd, readiness -> kube -> api -> contract.
BELOW_KINDS = {"xrd", "readiness", "kube", "api", "contract"}
KINDS = {f"kinds.{k}" for k in ("graph", "component", "scaling", "checkpoint", "request", "model", "platform")}
ALLOWED: dict[str, set[str]] = {
    "tooling": {"serve", "fn", "kinds", *BELOW_KINDS, *KINDS},
    "serve": {"fn", "kinds"},
    "fn": {"kinds", "contract"},
    "kinds": {"contract", "api", *KINDS},
    # A kind uses another kind's folder only when it composes that kind: a DGD composes DCDs, scaling adapters and
    # checkpoints, a DCD checkpoints, a DGDR the DGD it generates.
    "kinds.graph": {"kinds.component", "kinds.scaling", "kinds.checkpoint", *BELOW_KINDS},
    "kinds.component": {"kinds.checkpoint", *BELOW_KINDS},
    "kinds.request": {"kinds.graph", *BELOW_KINDS},
    "kinds.scaling": BELOW_KINDS,
    "kinds.checkpoint": BELOW_KINDS,
    "kinds.model": BELOW_KINDS,
    "kinds.platform": BELOW_KINDS,
    "xrd": {"api"},
    "readiness": {"kube", "api", "contract"},
    "kube": {"api", "contract"},
    "api": {"contract"},
    "contract": set(),
}


def folder_of(module: str) -> str:
    """The folder a module belongs to: ``kinds.graph`` for ``functions.kinds.graph.x``, ``kinds`` for the registry."""
    parts = module.split(".")[1:]
    if parts[:1] == ["kinds"] and len(parts) > 1 and (PACKAGE / "kinds" / parts[1]).is_dir():
        return f"kinds.{parts[1]}"
    return parts[0] if parts else ""


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every ``functions`` import in the file, the ones inside functions included."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            target = next((n for n in reversed(names) if _is_module(n)), node.module)
            out.append((node.lineno, target))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
    return [(line, m) for line, m in out if m == "functions" or m.startswith("functions.")]


def _is_module(dotted: str) -> bool:
    path = REPO / dotted.replace(".", "/")
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def test_every_folder_has_its_rule() -> None:
    folders = {folder_of(module_name(p)) for p in PACKAGE.rglob("*.py")} - {""}
    assert folders <= set(ALLOWED), f"folders without a layering rule: {sorted(folders - set(ALLOWED))}"


def test_folders_import_downward_only() -> None:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = folder_of(module_name(path))
        for line, target in imports(path):
            dest = folder_of(target)
            if dest and dest != source and dest not in ALLOWED.get(source, set()):
                wrong.append(f"{path.relative_to(REPO)}:{line}: {source} -> {dest} ({target})")
    assert not wrong, "imports against the layering (docs/architecture.md, Layers):\n" + "\n".join(wrong)


def test_the_rule_catches_an_upward_import(tmp_path: Path) -> None:
    probe = PACKAGE / "kube" / "_layering_probe.py"
    probe.write_text("from functions.kinds.graph.graph_status import xr_status\n")
    try:
        assert imports(probe) == [(1, "functions.kinds.graph.graph_status")]
        assert folder_of(module_name(probe)) == "kube"
        assert "kinds.graph" not in ALLOWED["kube"]
    finally:
        probe.unlink()


def loaded_modules(script: str) -> list[str]:
    code = f"import sys; {script}; print(chr(10).join(sorted(sys.modules)))"
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.split()


def tooling_among(modules: list[str]) -> list[str]:
    prefixes = ("functions.tooling", "functions.xrd", "cel_expr")
    return [m for m in modules if m.startswith(prefixes) or m.endswith("_xrd")]


def test_the_server_loads_no_tooling() -> None:
    """What the image's ``serve`` imports: the runtime, the kinds and their libraries, and none of the tooling, the
    XRD generation or the offline validator's engines (the runtime image leaves them out)."""
    modules = loaded_modules(
        "from functions.serve import FunctionRunner, runtime_cli; runtime_cli.get_command(None, 'serve'); "
        "FunctionRunner()"
    )
    assert "functions.fn" in modules and "functions.kinds.graph.graph_render_step" in modules
    assert tooling_among(modules) == []


def test_the_cli_loads_only_the_command_it_runs() -> None:
    modules = loaded_modules("from functions.tooling.main import cli; cli.get_command(None, 'serve')")
    assert tooling_among(modules) == ["functions.tooling", "functions.tooling.main"]


def test_render_runs_the_steps_in_process_without_grpc() -> None:
    """``render`` calls ``functions.fn.run`` directly; grpc (and the asyncio it brings) is the server's alone."""
    modules = loaded_modules("from functions.tooling.main import cli; cli.get_command(None, 'render')")
    assert "functions.fn" in modules and "functions.tooling.render" in modules
    assert [m for m in modules if m == "grpc" or m.startswith("grpc.")] == []


def test_a_step_is_loaded_when_it_is_first_looked_up_and_the_server_loads_them_all() -> None:
    """``render`` of a DGD loads the DGD's steps (and the kinds they compose), not the request's, the model's or the
    platform's."""
    modules = loaded_modules("from functions.kinds import STEPS; STEPS['GraphDeployment']")
    assert "functions.kinds.graph.graph_render_step" in modules
    assert not [m for m in modules if m.endswith(("request_step", "model_step", "platform_step"))]
    # Placement wraps the step, and reads the platform's names and its published tenancy only: not its models or
    # renderers.
    platform = sorted(m for m in modules if m.startswith("functions.kinds.platform."))
    assert platform == [
        "functions.kinds.platform.placement",
        "functions.kinds.platform.platform_names",
        "functions.kinds.platform.tenancy",
    ]
    modules = loaded_modules("from functions.serve import FunctionRunner; FunctionRunner()")
    loaded = {m.rpartition(".")[2] for m in modules}
    steps = ("checkpoint", "component", "graph_render", "graph_status", "model", "platform", "request", "scaling")
    assert [step for step in steps if f"{step}_step" not in loaded] == []


def test_help_lists_every_command_and_imports_none() -> None:
    from functions.tooling.main import COMMANDS, SUMMARIES

    assert set(SUMMARIES) == set(COMMANDS)
    modules = loaded_modules(
        "from click.testing import CliRunner; from functions.tooling.main import cli; "
        "assert CliRunner().invoke(cli, ['--help']).exit_code == 0"
    )
    assert not [m for m in modules if m.startswith(("functions.tooling.render", "functions.kinds", "functions.fn"))]


def test_the_server_builds_every_model_before_its_first_request() -> None:
    """Models build on first use, so a command pays only for the kind it renders; the server builds all of them
    when it starts, so no request pays."""
    code = (
        "from functions.api.fields import DynamoModel; from functions.serve import FunctionRunner\n"
        "def every(m): return [m, *(s for c in m.__subclasses__() for s in every(c))]\n"
        "assert not all(m.__pydantic_complete__ for m in every(DynamoModel))\n"
        "FunctionRunner()\n"
        "lazy = [m.__name__ for m in every(DynamoModel) if not m.__pydantic_complete__]\n"
        "assert not lazy, lazy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


# --- the tests' helpers (docs/testing.md, "The harness") -----------------------------------------------------------

TESTS = REPO / "tests"
# Each module of tests/harness and its layer: it imports harness modules of its own layer or below, and fixtures.
HARNESS_LAYERS = {
    "poll": 0,
    "pki": 1,
    "controlplane": 2,
    "apiserver": 3,
    **dict.fromkeys(("crossplane_rbac", "packages", "server", "container"), 4),
    "crossplane_core": 5,
    **dict.fromkeys(("composites", "controller_play", "kubelet_play", "metrics_play", "providers"), 6),
    **dict.fromkeys(("operator_stack", "verdicts", "cli"), 6),
    **dict.fromkeys(("differential", "migration_report", "fault_harness", "fault_proxy", "bench_controllers"), 7),
}


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every absolute import in the file, nested ones included; ``from harness import x`` is
    ``harness.x``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module in ("harness", "fixtures"):
                out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
            else:
                out.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
    return sorted(out)


def python_files(*folders: Path) -> list[Path]:
    return sorted(p for folder in folders for p in folder.rglob("*.py"))


def wrong_imports(paths: list[Path], refused: Callable[[str], bool]) -> list[str]:
    """``file:line: module`` for each import of a module ``refused`` names."""
    return [f"{path}:{line}: {module}" for path in paths for line, module in imported_modules(path) if refused(module)]


def is_test_module(module: str) -> bool:
    return module.split(".")[-1].startswith("test_")


def is_harness(module: str) -> bool:
    return module.split(".")[0] == "harness"


def test_every_helper_lives_in_the_harness_or_the_fixtures() -> None:
    """Beside the test modules, ``tests/`` holds only ``conftest.py``: each helper is in one of the two packages, and
    each harness module has its layer."""
    loose = [p.name for p in TESTS.glob("*.py") if p.name != "conftest.py" and not p.name.startswith("test_")]
    assert loose == [], f"helpers outside tests/harness and tests/fixtures: {loose}"
    modules = {p.stem for p in (TESTS / "harness").glob("*.py")} - {"__init__"}
    assert modules == set(HARNESS_LAYERS), (
        f"harness modules and layers that do not pair: {modules ^ set(HARNESS_LAYERS)}"
    )


def test_no_test_module_imports_another() -> None:
    """What two test modules share lives in the harness or the fixtures, so that each test module runs alone."""
    assert wrong_imports(sorted(TESTS.glob("test_*.py")), is_test_module) == []


def test_the_helpers_and_scripts_import_no_test_module() -> None:
    helpers = python_files(TESTS / "harness", TESTS / "fixtures", TESTS / "scenarios", REPO / "scripts")
    assert wrong_imports([*helpers, TESTS / "conftest.py"], is_test_module) == []


def test_the_fixtures_start_nothing_of_the_stack() -> None:
    """The fixtures never import the harness, so an offline test that imports fixtures only never loads it."""
    assert wrong_imports(python_files(TESTS / "fixtures"), is_harness) == []


def test_the_harness_imports_downward_only() -> None:
    wrong = []
    for path in python_files(TESTS / "harness"):
        layer = HARNESS_LAYERS.get(path.stem, 0)  # __init__ imports nothing
        for line, module in imported_modules(path):
            target = module.split(".")[1] if is_harness(module) and "." in module else None
            if target is not None and HARNESS_LAYERS[target] > layer:
                where = path.relative_to(REPO)
                wrong.append(f"{where}:{line}: layer {layer} imports {module} (layer {HARNESS_LAYERS[target]})")
    assert wrong == [], "harness imports against its layers (docs/testing.md):\n" + "\n".join(wrong)


def test_the_rules_see_every_form_of_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from test_crossplane_e2e import preview\n"
        "import test_gms\n"
        "def f() -> None:\n"
        "    from harness import apiserver\n"
        "    from harness.controlplane import ControlPlane\n"
    )
    assert imported_modules(probe) == [
        (1, "test_crossplane_e2e"), (2, "test_gms"), (4, "harness.apiserver"), (5, "harness.controlplane")
    ]  # fmt: skip
    assert wrong_imports([probe], is_test_module) == [f"{probe}:1: test_crossplane_e2e", f"{probe}:2: test_gms"]
    assert wrong_imports([probe], is_harness) == [f"{probe}:4: harness.apiserver", f"{probe}:5: harness.controlplane"]


# Loops that wait while they do more than poll, each with why it is not ``harness.poll.until``.
OWN_LOOPS = {
    "tests/harness/poll.py::until": "the one polling loop",
    "tests/harness/bench_controllers.py::wait_settled": "waits for a count to stop changing; never fails",
    "tests/harness/differential.py::settle": "waits for what the stacks store to stop changing; never fails",
    "tests/harness/providers.py::play_providers": "plays the providers, noting which objects existed before which",
    "tests/test_crossplane_lifecycle.py::test_a_new_restart_id_walks_the_components_one_by_one": (
        "checks the restart's order at every look"
    ),
    "tests/test_crossplane_rbac.py::test_no_request_of_crossplane_was_refused": (
        "stops early on a refusal no retry cures"
    ),
    "tests/test_crossplane_upgrade.py::run": "a thread sampling the composites during the upgrade",
    "tests/test_quickstart.py::test_the_readme_quickstart_installs_crossplane_and_the_package_and_serves_the_example": (
        "waits for the script while the nodes are played"
    ),
    "scripts/bench-cluster.py::run_round": "plays Grove as graphs compose; the round's seconds come from watch events",
}


def deadline_loops(path: Path) -> list[str]:
    """``file::function`` for each function with a ``while`` loop that sleeps, in a function that reads the clock."""
    found = []
    for fn in ast.walk(ast.parse(path.read_text())):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        calls = {ast.unparse(c.func) for c in ast.walk(fn) if isinstance(c, ast.Call)}
        loops = [n for n in ast.walk(fn) if isinstance(n, ast.While)]
        sleeps = any(ast.unparse(c.func) == "time.sleep" for n in loops for c in ast.walk(n) if isinstance(c, ast.Call))
        if sleeps and "time.monotonic" in calls:
            found.append(f"{path.relative_to(REPO)}::{fn.name}")
    return found


def test_the_tests_and_scripts_wait_through_one_helper() -> None:
    """A loop that sleeps until a deadline is ``harness.poll.until`` (which says what it waited for and what it
    last saw), unless it does more than wait and says why above."""
    loops = {loop for p in python_files(TESTS, REPO / "scripts") for loop in deadline_loops(p)}
    assert sorted(loops - set(OWN_LOOPS)) == [], "use harness.poll.until, or list the loop in OWN_LOOPS with why"
    assert sorted(set(OWN_LOOPS) - loops) == [], "OWN_LOOPS lists loops that are gone"
