"""Benchmarks write their figures into one markdown file, each into its own marked section,
so re-running one benchmark replaces its section and leaves the others alone. The benchmarks that
measure in stages (learning, adversarial) keep their rows in a ResultsStore and time them with
cpu_s."""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import socket
import time
from datetime import UTC, datetime
from pathlib import Path

HEADER = (
    "# Benchmarks\n\nMeasured figures, each section written by the benchmark named in it "
    "(`python benchmarks/<name>.py --write docs/benchmarks.md`). Ratios are against a baseline "
    "measured in the same run. Simulated workers measure the system, never model quality.\n"
)


def write_section(path: Path, key: str, title: str, body: str) -> None:
    text = path.read_text() if path.exists() else HEADER
    stamp = datetime.now(UTC).strftime("%Y-%m-%d")
    # the stamp is a paragraph of its own: a table right after it on one line would not render
    block = f"<!-- {key}:start -->\n## {title}\n\n_Measured {stamp}._\n\n{body.strip()}\n<!-- {key}:end -->"
    pattern = re.compile(rf"<!-- {re.escape(key)}:start -->.*?<!-- {re.escape(key)}:end -->", re.DOTALL)
    text = pattern.sub(lambda _m: block, text) if pattern.search(text) else text.rstrip() + "\n\n" + block + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def section_parser(doc: str | None, section: str) -> argparse.ArgumentParser:
    """A benchmark's parser (its docstring as the description) with `--write`, for one section."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", type=Path, help=f"update the {section} section of this markdown file")
    return parser


def write_if_asked(write: Path | None, key: str, title: str, body: str) -> None:
    """With `--write`, the section into that markdown file (the benchmark printed it already)."""
    if write:
        write_section(write, key, title, body)
        print(f"wrote {write}")


def cpu_s() -> float:
    """This process's user + system CPU seconds so far; a stage's CPU-minutes are the difference
    (other jobs on a shared machine inflate its wall time, not these)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def add_results_options(ap: argparse.ArgumentParser, out: Path) -> None:
    """The options of a benchmark that keeps its rows in a ResultsStore: the folder of its
    results.json, and printing (with --write, writing) the report assembled from it."""
    ap.add_argument("--out", type=Path, default=out)
    ap.add_argument("--report", action="store_true", help="Print (and with --write, write) the tables.")
    ap.add_argument("--write", type=Path, default=None)


class ResultsStore:
    """A benchmark's results.json: one entry per measured row under `key(row)`, replaced when
    re-measured and stamped with when and where it was measured (the host, its 1-minute load
    average), so runs in separate processes or on other days add up and a report reads them all.
    A subclass says how a row is keyed and printed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)

    def key(self, row: dict) -> str:
        return row["method"]

    def summary(self, row: dict) -> str:
        """What is printed when `row` is saved (one or more lines)."""
        return f"  {self.key(row)}: accuracy {row['accuracy']:.3f}"

    def load(self) -> dict[str, dict]:
        return json.loads(self.path.read_text()) if self.path.exists() else {}

    def put(self, row: dict) -> None:
        data = self.load()  # re-read: another process may have added its rows meanwhile
        data[self.key(row)] = {**row, "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                               "host": socket.gethostname(), "load_avg_1m": os.getloadavg()[0]}
        self.path.write_text(json.dumps(data, indent=1))
        print(self.summary(row), flush=True)
