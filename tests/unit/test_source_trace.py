"""The benchmarks' trace (benchmarks/source_trace): many processes and threads write one
file, its import hook runs beside other threads' imports, and it shadows no other
``sitecustomize``. Each case runs in new interpreters, as Spark's Python processes do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from benchmarks import source_trace
from benchmarks.source_trace.sitecustomize import TRACE_ENV

HERE = str(source_trace.HERE)


def _python(code: str, trace: str, path: list) -> subprocess.Popen:
    env = {**os.environ, TRACE_ENV: trace, "PYTHONPATH": os.pathsep.join(path)}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(process: subprocess.Popen) -> str:
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    return out


def test_events_of_many_processes_and_threads_are_each_one_whole_line(tmp_path):
    trace = str(tmp_path / "trace.jsonl")
    code = """
        import sys, threading
        import sitecustomize
        sys.setswitchinterval(1e-6)  # switch threads as often as possible
        pad = "x" * 2000  # flushes of ~1 MB
        def work(thread):
            for i in range(400):
                sitecustomize.emit("e", 0.0, 1.0, thread=thread, i=i, pad=pad)
        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    """
    for process in [_python(code, trace, [HERE]) for _ in range(6)]:
        _finish(process)
    events = source_trace.load(trace)  # raises on a line that is not one whole event
    emitted = [(e["pid"], e["thread"], e["i"]) for e in events if e["ev"] == "e"]
    assert len(emitted) == 6 * 4 * 400
    assert len(set(emitted)) == len(emitted)  # none written twice
    assert sum(e["ev"] == "process" for e in events) == 6


def test_two_threads_importing_at_once_both_get_their_modules(tmp_path):
    trace = str(tmp_path / "trace.jsonl")
    code = """
        import sys, threading
        import sitecustomize
        sys.setswitchinterval(1e-6)  # switch threads as often as possible
        hook = next(f for f in sys.meta_path if type(f).__name__ == "_ImportHook")
        sitecustomize.TIMED_IMPORTS.add("json")
        failures = []
        def find():
            try:
                for _ in range(2000):
                    assert hook.find_spec("json", None) is not None
            except Exception as exc:
                failures.append(repr(exc))
        threads = [threading.Thread(target=find) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        print(failures[:1], sys.meta_path.count(hook))
    """
    assert _finish(_python(code, trace, [HERE])).split() == ["[]", "1"]


def test_the_sitecustomize_it_shadows_still_runs(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "sitecustomize.py").write_text("import os\nos.environ['SHADOWED_RAN'] = 'yes'\n")
    code = """
        import json, os, sys
        print(json.dumps([os.environ.get("SHADOWED_RAN"), "sitecustomize" in sys.modules]))
    """
    trace = str(tmp_path / "trace.jsonl")
    out = _finish(_python(code, trace, [HERE, str(other)]))
    assert json.loads(out) == ["yes", True]
    # without the trace it is not imported at all: the other one runs as it always did
    assert json.loads(_finish(_python(code, "", [str(other)]))) == ["yes", True]


def test_a_forked_child_does_not_write_its_parents_events_again(tmp_path):
    """The PySpark daemon forks its workers: what the parent had not yet written is
    written before the fork, once."""
    trace = str(tmp_path / "trace.jsonl")
    code = """
        import os
        import sitecustomize
        sitecustomize.emit("before the fork", 0.0, 1.0)
        child = os.fork()
        if child:
            os.waitpid(child, 0)
        else:
            sitecustomize.emit("in the child", 0.0, 1.0)
    """
    _finish(_python(code, trace, [HERE]))
    events = [e["ev"] for e in source_trace.load(trace)]
    assert sorted(events) == ["before the fork", "in the child", "process"]
