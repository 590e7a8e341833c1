"""Progress lines: redrawn with a bar on a terminal, plain and rate-limited elsewhere."""

from __future__ import annotations

import io

from kinesis_dstream.progress_bar import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_at_most_once_an_interval_and_the_final_count():
    now = [0.0]
    out = io.StringIO()
    with Progress("reading", unit="records", out=out, clock=lambda: now[0]) as progress:
        for _ in range(10):  # ten pages within 0.9 s: one line, then the final one
            progress.advance(100)
            now[0] += 0.1
        now[0] += 1.0
        progress.advance(5)
    assert out.getvalue().splitlines() == [
        "reading: 100 records",
        "reading: 1,005 records",
        "reading: 1,005 records",
    ]


def test_a_terminal_gets_one_redrawn_line_with_a_bar():
    out = Terminal()
    with Progress("producing", total=4, unit="records", out=out) as progress:
        for _ in range(4):
            progress.advance()
    text = out.getvalue()
    assert text.count("\r") == 5 and text.endswith("\n") and text.count("\n") == 1
    assert "\rproducing: [" + "#" * 24 + "] 4/4 records (100%)" in text
    assert "[" + "#" * 6 + "." * 18 + "] 1/4 records (25%)" in text


def test_the_progress_module_never_hides_kinesis_dstream_progress():
    """``kinesis_dstream.progress()`` (the running streams' figures) stays a function
    once the progress-bar module is imported (a submodule named ``progress`` would
    replace the package attribute)."""
    import kinesis_dstream
    import kinesis_dstream.cli  # imports the progress bar
    import kinesis_dstream.demo.word_producer

    assert callable(kinesis_dstream.progress)
