"""The layering rule: the import-linter contracts in pyproject.toml ([tool.importlinter]) hold, and
each of them can fail.

`.venv/bin/lint-imports` from the repository root checks the same contracts; this file runs it
too, on every `make test`, and then shows that each contract breaks when a module breaks its
rule. The bad modules are written into a temporary copy of the repository (never the checkout,
where other test files run beside this one), and lint-imports runs there, on the copy's own
pyproject.toml.

The entry-point groups of pyproject.toml ([project.entry-points]) are how the library reaches the
layers above it at run time: a library module importing any of their implementations is refused.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
CONTRACTS = {c["id"]: c["name"] for c in PYPROJECT["tool"]["importlinter"]["contracts"]}


def repo_copy(dest: Path) -> Path:
    """The files git tracks or would add (not ignored), copied into `dest`."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        if (REPO / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, dest / rel)
    return dest


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports in `root` with its pyproject.toml, importing `root`'s packages (not the checkout's)."""
    env = os.environ | {"PYTHONPATH": str(root)}
    return subprocess.run([str(LINT), "--no-cache"], cwd=root, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    return repo_copy(tmp_path / "repo")


def test_the_layering_contracts_hold() -> None:
    result = lint(REPO)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in result.stdout


@pytest.mark.parametrize(("module", "line", "contract"), [
    ("conductor/_bad_import.py", "import prefect\n", "library"),
    ("registry/_bad_import.py", "import duckdb\n", "duckdb"),
    ("warehouse/_bad_import.py", "import mlflow\n", "mlflow"),
    ("tasks/_bad_import.py", "import flows.run\n", "layers"),
    ("conductor/workers/_bad_cycle.py", "import conductor.solve\n", "acyclic"),  # workers -> solve -> executor -> workers
    ("tasks/launch.py", "import tasks.training\n", "acyclic"),  # the circle tasks/training <-> tasks/launch that was
])
def test_each_contract_can_fail(copy: Path, module: str, line: str, contract: str) -> None:
    """A module breaking one rule makes lint-imports exit non-zero, naming that contract broken."""
    (copy / module).write_text(line)
    result = lint(copy)
    assert result.returncode != 0 and f"{CONTRACTS[contract]} BROKEN" in result.stdout, result.stdout[-3000:]


def test_a_library_module_importing_down_is_fine(copy: Path) -> None:
    (copy / "conductor" / "_leaf.py").write_text("import conductor.executor\n")
    result = lint(copy)
    assert result.returncode == 0, result.stdout[-3000:]


def entry_point_modules() -> dict[str, list[str]]:
    """Entry-point group -> the modules its implementations live in ("pkg.mod:attr" -> "pkg.mod")."""
    groups = PYPROJECT["project"]["entry-points"]
    return {group: sorted({ref.split(":")[0] for ref in eps.values()}) for group, eps in groups.items()}


def test_the_library_may_not_import_any_entry_point_implementation(copy: Path) -> None:
    """Each group's implementations are reached at run time only: one library module importing
    each of them, and the library contract names every one of those imports as broken."""
    groups = entry_point_modules()
    assert set(groups) >= {"conductor.cli", "conductor.trackers", "conductor.training_sinks",
                           "conductor.model_resolvers"}
    modules = sorted({m for ms in groups.values() for m in ms})
    for i, module in enumerate(modules):
        (copy / "conductor" / f"_entry_point_{i}.py").write_text(f"import {module}\n")
    result = lint(copy)
    assert result.returncode != 0 and f"{CONTRACTS['library']} BROKEN" in result.stdout, result.stdout[-3000:]
    for i, module in enumerate(modules):
        assert f"conductor._entry_point_{i} -> {module}" in result.stdout, (module, result.stdout[-3000:])
