"""The benchmarks' ``--markdown`` pages: the option, the dated path, appending a run."""

import datetime as dt
import subprocess
import sys
from pathlib import Path

from benchmarks import results

ROOT = Path(__file__).resolve().parents[2]


def test_the_option_is_taken_out_of_the_arguments():
    assert results.take_markdown_option(["--records", "5"]) == (["--records", "5"], None)
    assert results.take_markdown_option(["--markdown", "--records", "5"]) == (
        ["--records", "5"],
        results.RESULTS_DIR,
    )
    assert results.take_markdown_option(["--markdown", "out", "-n", "1"]) == (
        ["-n", "1"],
        Path("out"),
    )
    assert results.take_markdown_option(["--markdown=x.md"]) == ([], Path("x.md"))


def test_a_folder_gets_a_dated_page_and_a_file_is_taken_as_it_is(tmp_path):
    day = dt.date(2026, 11, 25)
    assert results.page_path(tmp_path, "stream", day) == tmp_path / "2026-11-25-stream.md"
    assert results.page_path(tmp_path / "a.md", "stream", day) == tmp_path / "a.md"


def test_a_second_run_on_the_same_day_is_appended_with_machine_and_command(tmp_path):
    script = (
        "import sys\n"
        "from benchmarks import results\n"
        "def main():\n"
        "    print('figure', sys.argv[1:])\n"
        "results.run(main, 'demo', 'A demonstration')\n"
    )
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", script, "--markdown", str(tmp_path), "--rows", "3"],
            cwd=ROOT, capture_output=True, text=True, timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert "figure ['--rows', '3']" in done.stdout
    [page] = tmp_path.glob("*-demo.md")
    text = page.read_text()
    assert text.startswith(f"# {page.name[:10]}: A demonstration")
    assert text.count("## Run at") == 2
    assert text.count("figure ['--rows', '3']") == 2
    assert ("cores" in text and "command: `python -m" not in text) or "--rows 3" in text
    assert "exit status 0" in text


def test_the_kcl_daemon_benchmark_appends_its_table_under_the_shared_machine_facts(tmp_path):
    from types import SimpleNamespace

    from benchmarks.bench_kcl_daemon import markdown

    side = {"first_s": 0.6, "rate": 16000.0, "start_to_last_s": 4.2, "missing": 0,
            "duplicates": 0}
    rows = [{"shape": "plain-200", "run": 1, "java": side, "ours": side, "ratio": 1.0}]
    args = SimpleNamespace(records=60_000, shards=4)
    first = markdown(tmp_path, rows, args, "python -m benchmarks.bench_kcl_daemon")
    again = markdown(tmp_path, rows, args, "python -m benchmarks.bench_kcl_daemon --runs 2")
    assert first == again and first.name.endswith("-kcl-daemon.md")
    text = first.read_text()
    assert text.startswith(f"# {first.name[:10]}: kcl daemon drain")
    assert text.count("## Run at") == 2 and " cores (" in text
    assert text.count("| plain-200 | 1 | 0.6 | 16,000 |") == 2
    assert "`python -m benchmarks.bench_kcl_daemon --runs 2`" in text
