"""`conductor data ...`: curate the training and evaluation sets."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from conductor.cli.common import console, fail, user_errors
from conductor.data.curate import CurationConfig, run_curation
from conductor.data.sources import ALL_SOURCES, RowError
from conductor.profiles import names, spoken_names


def _help(field: str) -> str:
    """A curation option's help: the `CurationConfig` field's description (one documentation)."""
    return CurationConfig.model_fields[field].description or ""


def _default(field: str) -> Any:
    """A curation option's default: the `CurationConfig` field's, never restated here."""
    return CurationConfig.model_fields[field].default


# the five curation steps after the loads (duplicates, near duplicates, decontamination, sample, write)
_STEPS_AFTER_LOADS = 5


def register(app: typer.Typer) -> None:
    data_app = typer.Typer(help="Data: load sources, curate train/eval sets.", no_args_is_help=True)
    app.add_typer(data_app, name="data")

    @data_app.command("curate")
    def curate_cmd(
        out: Annotated[Path, typer.Option("--out", help="Directory for train.jsonl, eval/, manifest.json")],
        profile: Annotated[str, typer.Option(help=_help("profile"))] = _default("profile"),
        total: Annotated[int, typer.Option(help=_help("total"))] = _default("total"),
        seed: Annotated[int, typer.Option(help=_help("seed"))] = _default("seed"),
        on_error: Annotated[str, typer.Option(help=_help("on_error"))] = _default("on_error"),
        file: Annotated[list[str] | None, typer.Option(
            "--file", help=f"SOURCE=PATH, repeatable (the file in the source's own schema). {_help('paths')}")] = None,
        bank: Annotated[bool, typer.Option("--bank", help=_help("bank"))] = _default("bank"),
    ) -> None:
        """Load every source, drop bad rows, duplicates and contaminated rows, sample, write a manifest."""
        if profile not in names():
            raise fail(f"--profile must be {spoken_names()}, not {profile!r}")
        if on_error not in ("skip", "raise"):
            raise fail(f"--on-error must be skip or raise, not {on_error!r}")
        paths: dict[str, str] = {}
        for item in file or []:
            name, sep, path = item.partition("=")
            if not sep or name not in ALL_SOURCES:
                raise fail(f"--file wants SOURCE=PATH with SOURCE one of {', '.join(ALL_SOURCES)}; got {item!r}")
            paths[name] = path
        import datasets

        datasets.disable_progress_bars()  # ours is the one bar
        with user_errors(ValueError, RowError, FileNotFoundError, OSError):
            config = CurationConfig(profile=profile, total=total, seed=seed, on_error=on_error,  # type: ignore[arg-type]
                                    paths=paths, bank=bank)
            with Progress(TextColumn("{task.description:<22}"), BarColumn(), TimeElapsedColumn(),
                          console=console, transient=True) as bar:
                task = bar.add_task("curating", total=len(config.source_names) + _STEPS_AFTER_LOADS)

                def step(message: str) -> None:
                    bar.update(task, description=message, advance=1)

                manifest = run_curation(config, out, step)
        table = Table(title=f"curated -> {out}")
        for col in ("source", "role", "rows", "bad", "dup", "near", "contam", "selected"):
            table.add_column(col, justify="left" if col in ("source", "role") else "right")
        for s in manifest.sources.values():
            table.add_row(s.name, s.role, str(s.rows), str(s.bad_rows), str(s.duplicates), str(s.near_duplicates),
                          str(s.contaminated), str(s.selected))
        console.print(table)
        train = sum(s.selected for s in manifest.sources.values() if s.role == "train")
        console.print(f"train problems: {train}; manifest: {out / 'manifest.json'}")

    @data_app.command("bank")
    def bank_cmd(
        out: Annotated[Path, typer.Option("--out", help="JSONL file to write (one Problem per line)")],
        n: Annotated[int, typer.Option("--n", min=0, help="Problems, split evenly over the four domains")] = 2400,
        seed: Annotated[int, typer.Option(help="Generation seed (same seed, same problems)")] = 0,
        split: Annotated[str, typer.Option(help="all, train or heldout")] = "all",
        phrasing: Annotated[str, typer.Option(help="Wording style: bank (the bank's own), plain (a second "
                                                   "training-side style) or typed (the held-out style: as users "
                                                   "type; same problems and ids, other text)")] = "bank",
    ) -> None:
        """Write the generated problem bank (math, choice, freeform, code) as JSONL."""
        from collections import Counter

        from conductor.data.synthetic import generate_bank, split_bank
        from conductor.data.synthetic.styles import STYLES

        if split not in ("all", "train", "heldout"):
            raise fail(f"--split must be all, train or heldout, not {split!r}")
        if phrasing not in STYLES:
            raise fail(f"--phrasing must be one of {', '.join(STYLES)}, not {phrasing!r}")
        problems = generate_bank(n, seed, phrasing)
        if split != "all":
            problems = split_bank(problems)[0 if split == "train" else 1]
        with user_errors(OSError):
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text("".join(p.model_dump_json() + "\n" for p in problems), encoding="utf-8")
        counts = Counter(p.domain for p in problems)
        console.print(f"wrote {len(problems)} problems to {out}: "
                      + ", ".join(f"{d} {c}" for d, c in sorted(counts.items())))
