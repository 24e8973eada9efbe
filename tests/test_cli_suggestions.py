"""Every `conductor ...` command an error message suggests exists, with the options it names
(a production dry run once told the user to run `conductor pool check --pool FILE`, an option
`pool check` does not have). The messages are read from the source: every string inside a
`raise` or a `fail(...)` call in the packages the CLI is made of."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from typer.main import get_command

from conductor.cli import app

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("conductor", "flows", "warehouse", "registry", "server", "tasks")
# A suggestion is quoted in backticks: `conductor pool check FILE`, `conductor sql "..."`.
SUGGESTION = re.compile(r"`(conductor(?: [a-z][a-z-]*)+(?: (?:--[a-z][a-z-]*|[^\s`'\"]+))*)")


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def suggestions() -> list[tuple[str, str]]:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                is_fail = isinstance(node, ast.Call) and getattr(node.func, "id", None) == "fail"
                if isinstance(node, ast.Raise) or is_fail:
                    text = " ".join(_strings(node))
                    found += [(f"{path.relative_to(ROOT)}", m.group(1)) for m in SUGGESTION.finditer(text)]
    return found


def resolves(suggestion: str) -> str | None:
    """None when the command and its options exist, else what does not."""
    words = suggestion.split()[1:]
    cmd = get_command(app)
    while words and getattr(cmd, "commands", None) and words[0] in cmd.commands:
        cmd = cmd.commands[words.pop(0)]
    if getattr(cmd, "commands", None):
        return f"no command {suggestion!r}"
    opts = {o for p in cmd.params for o in (*p.opts, *getattr(p, "secondary_opts", []))}
    missing = [w for w in words if w.startswith("--") and w not in opts]
    return f"{suggestion!r}: no option {', '.join(missing)}" if missing else None


def test_error_messages_suggest_commands_that_exist() -> None:
    found = suggestions()
    assert any("pool check" in s for _, s in found)  # the scan reads the messages (one known)
    wrong = [f"{where}: {problem}" for where, s in found if (problem := resolves(s))]
    assert not wrong, wrong
