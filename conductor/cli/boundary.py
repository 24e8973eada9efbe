"""The CLI's one error boundary: every `conductor` command (the library's and the plug-ins')
runs inside `ConductorGroup.main`, where a failure the user can cause (a usage mistake, an empty
value, an exception of a kind `common.add_user_errors` names) becomes one line `error: ...` on
stderr with exit code 2, with its traceback only when `--debug` (anywhere on the command line)
or CONDUCTOR_DEBUG=1 asks for it. Anything else is a bug and keeps its traceback."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import typer
from typer._click.exceptions import ClickException, NoArgsIsHelpError  # typer vendors click (0.29)
from typer.core import TyperGroup

from conductor.cli.common import err_console, is_user_error, one_line

DEBUG_ENV = "CONDUCTOR_DEBUG"


def debug_requested(argv: Sequence[str]) -> bool:
    before_dashes = list(argv)[: list(argv).index("--")] if "--" in argv else list(argv)
    return "--debug" in before_dashes or os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")


def _strip_debug(argv: Sequence[str]) -> list[str]:
    argv = list(argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    return [a for a in argv[:cut] if a != "--debug"] + argv[cut:]


def set_prefect_home() -> None:
    """Prefect's state (its database, the flow runs `conductor ui` shows) under CONDUCTOR_HOME, as
    `make` sets it, unless the user set PREFECT_HOME: done here, before any command imports
    Prefect, which reads it once."""
    if not os.environ.get("PREFECT_HOME"):
        from conductor.config import Settings

        os.environ["PREFECT_HOME"] = str(Settings().home / "prefect")


def empty_value(argv: Sequence[str]) -> str | None:
    """The first empty value on the command line, named by its option (`--pool ''`,
    `--pool=`) or as an argument: no option or argument of `conductor` takes an empty string,
    so it is refused here, once, before a command starts anything."""
    for i, token in enumerate(argv):
        if token == "--":
            return None
        if token.startswith("--") and token.endswith("=") and len(token) > 3:
            return token[:-1]
        if token == "" or not token.strip():
            before = argv[i - 1] if i else ""
            return before if before.startswith("-") and "=" not in before else "an argument"
    return None


def _error(message: str, code: int) -> int:
    err_console.print(f"[bold red]error:[/] {message}", markup=True, highlight=False, soft_wrap=True)
    return code


class ConductorGroup(TyperGroup):
    """The `conductor` group: Typer's, with the error boundary around every invocation (the
    console script and typer's CliRunner both come through `main`)."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,  # type: ignore[override]
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        debug = debug_requested(argv)
        argv = _strip_debug(argv)
        try:
            code = self._run(argv, prog_name, complete_var, extra, debug)
        except SystemExit as exc:  # a command's own sys.exit
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else _error(str(exc.code), 1))
        if standalone_mode:
            sys.exit(code)
        return code

    def invoke(self, ctx: Any) -> Any:
        """Every subcommand runs in here. A Ctrl-C that the command did not answer itself says so in
        one line, rc 130: Typer turns a KeyboardInterrupt into a silent exit 130 before `main`
        could see it."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            err_console.print("interrupted", highlight=False)
            raise typer.Exit(130) from None

    def _run(self, argv: list[str], prog_name: str | None, complete_var: str | None, extra: dict[str, Any],
             debug: bool) -> int:
        if (empty := empty_value(argv)) is not None:
            return _error(f"{empty} is empty", 2)
        try:
            set_prefect_home()
            rv = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except NoArgsIsHelpError as exc:  # `conductor` or `conductor pool`: the help
            exc.show()
            return exc.exit_code
        except ClickException as exc:  # a usage mistake: bad option, missing argument, bad value
            hint = f" (`{exc.ctx.command_path} --help`)" if getattr(exc, "ctx", None) is not None else ""
            return _error(one_line(exc.format_message()) + hint, 2)
        except typer.Abort:
            return _error("aborted", 1)
        except KeyboardInterrupt:
            err_console.print("interrupted", highlight=False)
            return 130
        except Exception as exc:
            # A bug is not the user's mistake: it keeps its traceback (exit code 1), which a bug
            # report, or a nightly chunk's log, needs.
            if debug or not is_user_error(exc):
                raise
            return _error(one_line(exc), 2)
        return rv if isinstance(rv, int) else 0
