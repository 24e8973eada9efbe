"""No `_private` name is imported across modules: a name with a leading underscore is its
module's own, and another module that needs it gets a public name (or the code moves)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("conductor", "warehouse", "registry", "tasks", "flows", "server")


def private_imports(root: Path) -> list[str]:
    """`path:line name` for every `from X import _name` and every `something._name` read off an
    imported project module or another object's private attribute (`store._lock`), in the packages
    under `root`; a module's own `self._x` and `cls._x` are its own."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            rel = path.relative_to(root)
            outside = _external_names(tree)
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PACKAGES:
                    found += [f"{rel}:{node.lineno} {a.name}" for a in node.names
                              if a.name.startswith("_") and not a.name.startswith("__")]
                elif (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                      and isinstance(node.value, ast.Name) and node.value.id not in ("self", "cls")
                      and node.value.id not in outside and not _own(tree, node.value.id)):
                    found.append(f"{rel}:{node.lineno} {node.value.id}.{node.attr}")
    return found


def _external_names(tree: ast.Module) -> set[str]:
    """Names bound by imports from outside the project (`os._exit` is the standard library's business)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] not in PACKAGES}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] not in PACKAGES:
            names |= {a.asname or a.name for a in node.names}
    return names


def _own(tree: ast.Module, name: str) -> bool:
    """Whether `name` is a class this module defines (its private attributes are its own)."""
    return any(isinstance(n, ast.ClassDef) and n.name == name for n in tree.body)


def test_no_private_name_is_imported_across_modules() -> None:
    assert private_imports(REPO) == []


def test_the_check_finds_a_private_import(tmp_path: Path) -> None:
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "bad.py").write_text("from flows.cli import _helper\n\n\ndef f(store):\n"
                                               "    with store._lock:\n        pass\n", encoding="utf-8")
    assert private_imports(tmp_path) == ["flows/bad.py:1 _helper", "flows/bad.py:5 store._lock"]
