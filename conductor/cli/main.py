"""The `conductor` app. Library commands live here; the layers above the library
(warehouse, flows) add theirs through the `conductor.cli` entry point group."""

from __future__ import annotations

from importlib.metadata import entry_points

import typer

from conductor.cli import ask, data, model, pool, solve, train
from conductor.cli.boundary import ConductorGroup

app = typer.Typer(
    cls=ConductorGroup,  # the one error boundary: `error: ...`, exit code 2, no traceback unless --debug
    name="conductor",
    help="Train and run a Conductor: a small model that writes workflows over a pool of worker LLMs."
    " Mistakes are one line `error: ...` (exit code 2); --debug anywhere (or CONDUCTOR_DEBUG=1) shows"
    " the traceback instead.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
ask.register(app)
pool.register(app)
solve.register(app)
data.register(app)
model.register(app)
train.register(app)

for _ep in entry_points(group="conductor.cli"):
    try:
        _ep.load()(app)
    except ModuleNotFoundError as _exc:  # a layer not installed in this environment
        if _exc.name and _ep.value.split(":")[0].startswith(_exc.name):
            continue
        raise

__all__ = ["app"]
