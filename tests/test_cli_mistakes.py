"""Every `conductor` subcommand, enumerated from the Typer app (the library's and every plug-in's),
fed the usual mistakes: a missing file, an unknown id / version / alias / name, an unknown `--set`
field, an empty string, a malformed number. Each must end in ONE line `error: ...` with exit code
2, and no traceback (the error boundary in conductor/cli/boundary.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from conductor.cli import app

# Values that would be right (a free name, a host), or an output the command creates, or a hub id
# (`train --model`: checked when it loads, which an estimate does not): not a mistake here.
NOT_A_MISTAKE = {("ask", "question"), ("nightly", "run_key"), ("serve", "host"), ("serve", "name"), ("ui", "pool"),
                 ("deploy", "name"), ("train", "run_id"), ("eval", "dask_address"), ("data curate", "out"),
                 ("data bank", "out"), ("model init", "directory"), ("eval", "out"), ("plot", "out"),
                 ("train", "output_dir"), ("train", "result_file"), ("train", "model"), ("serve", "staging"), ("warehouse export", "parquet"),
                 ("solve", "out"), ("warehouse migrate", "db"), ("warehouse ingest", "db"), ("run", "db"),
                 ("nightly", "db"), ("eval", "db"), ("model promote", "warehouse_path"),
                 ("model rollback", "warehouse_path")}
# What keeps a command from starting real work once its input is read: each mistake must be
# refused before that (a train estimate, a nightly dry run, serving with no API key set).
SAFE = {"train": ["--estimate"], "nightly": ["--dry-run"], "model promote": ["--force"]}
# A required value that is itself wrong, so a command stops at its first check whatever the case.
REQUIRED = {"eval": ["--method", "nope"], "costs": ["--run", "nope"]}


def leaves() -> Iterator[tuple[str, object]]:
    def walk(cmd, path):  # noqa: ANN001, ANN202
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in sorted(subs.items()):
                yield from walk(sub, [*path, name])
        else:
            yield " ".join(path), cmd

    yield from walk(get_command(app), [])


def kind(param) -> str:  # noqa: ANN001
    annotation = str(param.type_descriptor.annotation)
    return next((k for k in ("Path", "float", "int") if k in annotation), "str")


def cases(missing: Path) -> Iterator[tuple[str, list[str]]]:
    for name, cmd in leaves():
        base = [*name.split(), *SAFE.get(name, []), *REQUIRED.get(name, [])]
        params = [p for p in cmd.params if not getattr(p, "is_flag", False) and p.name != "help"]
        args = [p for p in params if p.param_type_name == "argument"]

        def line(param, value: str) -> list[str]:  # noqa: ANN001 - the command with one value wrong
            filled = [value if a is param else ("nope" if kind(a) == "str" else str(missing)) for a in args]
            opt = [] if param.param_type_name == "argument" else [param.opts[0], value]  # type: ignore[union-attr]
            return [*base, *filled, *opt]

        for p in params:
            k = kind(p)
            if k in ("int", "float"):
                yield f"{name} {p.opts[0]} malformed", line(p, "abc")
            yield f"{name} {p.opts[0]} empty", line(p, "")
            if (name, p.name) in NOT_A_MISTAKE:
                continue
            if p.name == "settings_":
                yield f"{name} --set unknown field", line(p, "nonexistent_field=1")
            elif k == "Path":
                yield f"{name} {p.opts[0]} missing file", line(p, str(missing))
            elif k == "str" and p.name != "query":
                yield f"{name} {p.opts[0]} unknown", line(p, "nope-404")
        if args and not any((name, a.name) in NOT_A_MISTAKE for a in args):
            # every argument an unknown name or a missing file
            yield f"{name} wrong arguments", [*base, *("nope-404" if kind(a) == "str" else str(missing) for a in args)]
    yield "sql not SQL", ["sql", "SELEC nope"]
    yield "model promote unknown version", ["model", "promote", "999", "--force"]
    yield "registry resolve unknown alias", ["registry", "resolve", "models:/conductor@nope"]


# A missing file, under a regular file so that no command can create it either (mkdir fails).
MISSING = Path("{tmp}/a-file/missing.yaml")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    (home / "a-file").write_text("not a directory\n")
    return home


def _all_cases() -> list[tuple[str, list[str]]]:
    return list(cases(MISSING))


def test_every_subcommand_is_walked() -> None:
    names = {name for name, _ in leaves()}
    assert {"ask", "train", "nightly", "sql", "registry resolve", "model promote", "serve", "eval"} <= names
    covered = {" ".join(c[1][: len(n.split())]) for c in _all_cases() for n in names if c[1][: len(n.split())] == n.split()}
    assert names - {"model list", "registry versions", "warehouse info", "warehouse migrate"} <= covered


@pytest.mark.parametrize(("label", "argv"), _all_cases(), ids=[c[0] for c in _all_cases()])
def test_a_mistake_is_one_line(label: str, argv: list[str], home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONDUCTOR_HOME", str(home))
    monkeypatch.setenv("PREFECT_HOME", str(home / "prefect"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{home / 'mlflow.db'}")
    monkeypatch.delenv("CONDUCTOR_DEBUG", raising=False)
    monkeypatch.delenv("CONDUCTOR_API_KEYS", raising=False)
    monkeypatch.setenv("COLUMNS", "400")  # one line is one line, not rich's wrap at 80
    argv = [a.replace("{tmp}", str(home)) for a in argv]
    result = CliRunner().invoke(app, argv)
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert "Traceback" not in result.output, result.output
    assert result.exit_code == 2, (argv, result.output, result.exception)
    assert len(lines) == 1 and lines[0].startswith("error: "), (argv, result.output)


def test_set_names_the_nearest_field(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONDUCTOR_HOME", str(home))
    for command in (["train", "--estimate"], ["nightly", "--dry-run"]):
        result = CliRunner().invoke(app, [*command, "--set", "max_step=3"])
        assert result.exit_code == 2, result.output
        assert "--set max_step: not a training config field; did you mean max_steps?" in result.output
        result = CliRunner().invoke(app, [*command, "--set", "max_steps=many"])
        assert result.exit_code == 2 and "--set max_steps=many: expected an integer" in result.output, result.output
        # a value the field's own check refuses, before anything is estimated or planned
        result = CliRunner().invoke(app, [*command, "--set", 'effort_levels=["extreme"]'])
        assert result.exit_code == 2 and "Projected" not in result.output, result.output
        assert "effort must be one of low, medium, high, not 'extreme'" in result.output, result.output


@pytest.mark.parametrize("field", ["recursion_fraction", "second_round_fraction", "bad_worker_fraction"])
def test_a_share_of_rows_above_1_is_refused_before_anything_runs(field: str, home: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A share above 1 would act as 1 (every row drawn); `train` refused none of them but
    bad_worker_fraction, and started a full run."""
    monkeypatch.setenv("CONDUCTOR_HOME", str(home))
    result = CliRunner().invoke(app, ["train", "--estimate", "--set", f"{field}=2"])
    assert result.exit_code == 2 and "Projected" not in result.output, result.output
    assert f"{field} must be between 0 and 1 (got 2)" in result.output, result.output


def test_debug_shows_the_traceback(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONDUCTOR_HOME", str(home))
    argv = ["registry", "resolve", str(home / "no-model")]
    assert CliRunner().invoke(app, argv).exit_code == 2
    result = CliRunner().invoke(app, [*argv, "--debug"])
    assert result.exit_code == 1 and "no such model directory" in str(result.exception)
    monkeypatch.setenv("CONDUCTOR_DEBUG", "1")
    assert "no such model directory" in str(CliRunner().invoke(app, argv).exception)


def test_the_console_script_prints_one_line(tmp_path: Path) -> None:
    """The installed `conductor` command (the issue's measured cases), not only the app in-process."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "CONDUCTOR_HOME": str(tmp_path), "MLFLOW_TRACKING_URI": f"sqlite:///{tmp_path / 'm.db'}"}
    env.pop("CONDUCTOR_DEBUG", None)
    conductor = str(Path(sys.executable).parent / "conductor")
    for argv in (["registry", "resolve", "models:/nope@x"], ["train", "--set", "nonexistent_field", "--estimate"]):
        done = subprocess.run([conductor, *argv], capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 2 and done.stdout == "", (argv, done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: "), (argv, done.stderr)


def test_a_ctrl_c_no_command_answers_is_one_line_and_130() -> None:
    """Typer turns a KeyboardInterrupt into a silent exit 130; the conductor group says so."""
    import typer

    from conductor.cli.boundary import ConductorGroup

    demo = typer.Typer(cls=ConductorGroup)

    @demo.command()
    def slow() -> None:
        raise KeyboardInterrupt

    @demo.command()
    def other() -> None:
        pass

    result = CliRunner().invoke(demo, ["slow"])
    assert (result.exit_code, result.output) == (130, "interrupted\n")
