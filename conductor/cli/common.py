"""Shared CLI plumbing: user errors become one line on stderr and exit code 2."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Mapping

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
        raise fail(one_line(exc)) from None


# What the CLI's error boundary (conductor/cli/boundary.py) reports as the user's mistake: one
# line and exit code 2. ValueError covers pydantic's ValidationError and the project's own
# errors (PoolError, MethodSpecError, ...); LookupError an unknown id; OSError a missing file.
# The layers above add theirs when they plug in (`add_user_errors`): a class, or its dotted name
# for a library the CLI should not import just to name it (mlflow.exceptions.MlflowException).
_USER_ERRORS: list[type[BaseException] | str] = [UserError, ValueError, LookupError, OSError]


def add_user_errors(*kinds: type[BaseException] | str) -> None:
    _USER_ERRORS.extend(k for k in kinds if k not in _USER_ERRORS)


def is_user_error(exc: BaseException) -> bool:
    names = {f"{c.__module__}.{c.__qualname__}" for c in type(exc).__mro__}
    return any(k in names if isinstance(k, str) else isinstance(exc, k) for k in _USER_ERRORS)


def one_line(exc: BaseException | str) -> str:
    """An error as one line: a pydantic ValidationError as `field: message` per error, a
    KeyError's key without its quotes' repr noise, anything else its first non-empty line."""
    if isinstance(exc, BaseException):
        errors = getattr(exc, "errors", None)
        if callable(errors) and type(exc).__name__ == "ValidationError":
            try:
                return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in errors())
            except (TypeError, KeyError):
                pass
        if isinstance(exc, KeyError) and exc.args:
            return f"unknown {exc.args[0]}"
        text = str(exc)
        if not text.strip():
            return type(exc).__name__
    else:
        text = exc
    return next((line.strip() for line in text.splitlines() if line.strip()), text.strip())


def read_text_arg(value: str) -> str:
    """A path, or `-` for standard input."""
    if value == "-":
        return sys.stdin.read()
    try:
        with open(value, encoding="utf-8") as fh:
            return fh.read()
    except OSError as exc:
        raise UserError(f"cannot read {value}: {exc.strerror}") from None


def parse_settings(pairs: list[str] | None, known: Mapping[str, object], *, option: str = "--set",
                   what: str = "training config field") -> dict[str, object]:
    """`KEY=VALUE` pairs as a dict, each VALUE read as JSON when it is JSON (`3`, `true`,
    `"x"`, `[1]`) and as a string otherwise. `known` maps each valid KEY to its default: a KEY
    not in it is refused with the nearest valid name, and a VALUE not of its default's kind
    (a number, a bool) is refused, before anything starts (the one check of every `--set`)."""
    import difflib
    import json

    names = sorted(known)
    out: dict[str, object] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UserError(f"{option} {pair!r}: expected KEY=VALUE")
        if key not in names:
            nearest = difflib.get_close_matches(key, names, n=1, cutoff=0.0)
            raise UserError(f"{option} {key}: not a {what}" + (f"; did you mean {nearest[0]}?" if nearest else ""))
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = value
        out[key] = _of_kind(option, key, parsed, known[key])
    return out


def _of_kind(option: str, key: str, value: object, default: object) -> object:
    """`value` when it is what `default`'s type takes (an int where a float is; None where the
    default is None); else a UserError that says what was expected."""
    kinds: tuple[type, ...] = ()
    if isinstance(default, bool):
        kinds = (bool,)
    elif isinstance(default, int):
        kinds = (int,)
    elif isinstance(default, float):
        kinds = (int, float)
    if kinds and (value is not None) and (not isinstance(value, kinds) or (bool not in kinds and isinstance(value, bool))):
        kind = "true or false" if bool in kinds else "an integer" if kinds == (int,) else "a number"
        raise UserError(f"{option} {key}={json_text(value)}: expected {kind}")
    return value


def json_text(value: object) -> str:
    import json

    return value if isinstance(value, str) else json.dumps(value)


def training_fields() -> dict[str, object]:
    """What `--set` takes for training (`conductor train`, `conductor nightly`): the training
    config's fields (the Conductor's own and TRL's GRPOConfig's), each with its default."""
    import dataclasses

    from conductor.training.config import ConductorTrainingConfig

    return {f.name: None if f.default is dataclasses.MISSING else f.default
            for f in dataclasses.fields(ConductorTrainingConfig) if f.init}


def quiet_library_bars() -> None:
    """One bar per stage, not one per library call: datasets' map and tokenize bars, transformers'
    weight loading and shard writing, MLflow's artifact transfers are off for this process."""
    import os

    import datasets
    from transformers.utils import logging as hf_logging

    datasets.disable_progress_bars()
    hf_logging.disable_progress_bar()
    os.environ.setdefault("MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR", "false")
