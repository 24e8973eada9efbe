"""The layering rule as import-linter contracts, checked on every `make test`.

- conductor/ (the library) imports no prefect, duckdb or mlflow, and no layer above it;
- only warehouse/ imports duckdb; only registry/ imports mlflow;
- (server | flows) -> tasks -> (warehouse | registry) -> conductor: nothing imports server/
  (the `conductor serve` command reaches it through the `conductor.cli` entry point);
- no import cycles between conductor's subpackages and modules, at any depth.

The configuration is written here rather than in a static file because `registry/` may not
exist yet (it is being built on another branch): import-linter refuses a root package that
does not exist, so a package that is absent is left out, and its contracts start to hold the
moment it lands. `layer_contracts()` is also what `python -m tests.test_layers` prints.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")


def _present(*packages: str) -> list[str]:
    return [p for p in packages if (REPO / p / "__init__.py").is_file()]


def _lines(modules: list[str]) -> str:
    return "".join(f"\n    {m}" for m in modules)


def layer_contracts() -> str:
    roots = _present("conductor", "warehouse", "registry", "tasks", "flows", "server")
    above_library = [p for p in roots if p != "conductor"]
    middle = " | ".join(_present("warehouse", "registry"))
    return f"""\
[importlinter]
root_packages ={_lines(roots)}
include_external_packages = True

[importlinter:contract:library]
name = conductor/ imports no prefect, duckdb or mlflow, nor any layer above it
type = forbidden
source_modules =
    conductor
forbidden_modules ={_lines(["prefect", "duckdb", "mlflow", *above_library])}

[importlinter:contract:duckdb]
name = only warehouse/ imports duckdb
type = forbidden
source_modules ={_lines([p for p in roots if p != "warehouse"])}
forbidden_modules =
    duckdb
allow_indirect_imports = True

[importlinter:contract:mlflow]
name = only registry/ imports mlflow
type = forbidden
source_modules ={_lines([p for p in roots if p != "registry"])}
forbidden_modules =
    mlflow
allow_indirect_imports = True

[importlinter:contract:layers]
name = server | flows -> tasks -> warehouse | registry -> conductor
type = layers
layers =
    {" | ".join(_present("server", "flows"))}
    tasks
    {middle}
    conductor

[importlinter:contract:acyclic]
name = no import cycles inside conductor/
type = acyclic_siblings
ancestors =
    conductor
"""


def lint(config: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "importlinter.ini"
    path.write_text(config)
    return subprocess.run([str(LINT), "--config", str(path), "--no-cache"], cwd=REPO, capture_output=True,
                          text=True, timeout=300)


def test_the_layering_contracts_hold(tmp_path):
    result = lint(layer_contracts(), tmp_path)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(("module", "line", "broken"), [
    ("conductor/_bad_import.py", "import duckdb\n", "conductor/ imports no prefect"),
    ("tasks/_bad_import.py", "import flows.run\n", "flows -> tasks"),
    ("conductor/_bad_import.py", "import conductor.executor\n", None),  # a leaf importing down: fine
])
def test_a_bad_import_breaks_a_contract(tmp_path, module, line, broken):
    """The contracts can fail: a module that breaks the rule makes lint-imports exit non-zero."""
    bad = REPO / module
    bad.write_text(line)
    try:
        result = lint(layer_contracts(), tmp_path)
    finally:
        bad.unlink()
    if broken is None:
        assert result.returncode == 0, result.stdout[-3000:]
    else:
        assert result.returncode != 0 and broken in result.stdout, result.stdout[-3000:]


def test_a_cycle_inside_conductor_breaks_the_acyclic_contract(tmp_path):
    bad = REPO / "conductor" / "workers" / "_bad_cycle.py"
    bad.write_text("import conductor.solve\n")  # workers -> solve -> executor -> workers
    try:
        result = lint(layer_contracts(), tmp_path)
    finally:
        bad.unlink()
    assert result.returncode != 0 and "no import cycles inside conductor/" in result.stdout, result.stdout[-3000:]


if __name__ == "__main__":
    print(layer_contracts())
