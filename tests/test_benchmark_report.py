"""benchmarks/report.py's `write_section`: a benchmark's section is replaced in place, the others
are left alone, and a section that opens with a table still renders as one (markdown-it, the
CommonMark renderer)."""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt

from benchmarks.report import write_section

TABLE = "| method | accuracy |\n|---|---|\n| one attempt | 0.70 |\n\nA footnote."


def test_a_section_opening_with_a_table_renders_as_a_table(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    write_section(doc, "effort", "Test-time scaling", TABLE)
    html = MarkdownIt("commonmark").enable("table").render(doc.read_text())
    assert "<table>" in html
    assert "<td>one attempt</td>" in html


def test_rewriting_one_section_leaves_the_others(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    write_section(doc, "a", "First", "old figures")
    write_section(doc, "b", "Second", "other figures")
    write_section(doc, "a", "First", "new figures")
    text = doc.read_text()
    assert "new figures" in text and "old figures" not in text
    assert "other figures" in text
    assert text.count("<!-- a:start -->") == 1
