"""Shared CLI plumbing: user errors become one line on stderr and exit code 2."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import typer
from rich.console import Console

console = Console()
err_console = Console(stderr=True)


class UserError(Exception):
    """Something the user can fix (bad file, bad id); printed as one line, exit code 2."""


def fail(message: str) -> typer.Exit:
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code=2)


@contextlib.contextmanager
def user_errors(*kinds: type[BaseException]) -> Iterator[None]:
    """Turn the given exception types (and UserError) into `error: ...` + exit 2."""
    try:
        yield
    except (UserError, *kinds) as exc:
        raise fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None


def read_text_arg(value: str) -> str:
    """A path, or `-` for standard input."""
    if value == "-":
        return sys.stdin.read()
    try:
        with open(value, encoding="utf-8") as fh:
            return fh.read()
    except OSError as exc:
        raise UserError(f"cannot read {value}: {exc.strerror}") from None


def parse_settings(pairs: list[str] | None, option: str = "--set") -> dict[str, object]:
    """`KEY=VALUE` pairs as a dict, each VALUE read as JSON when it is JSON (`3`, `true`,
    `"x"`, `[1]`) and as a string otherwise; the config they go to validates the keys."""
    import json

    out: dict[str, object] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UserError(f"{option} {pair!r}: expected KEY=VALUE")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out
