"""The process a Glue script runs in, started by ``kinesis-dstream glue run``.

The runner starts it in a session of its own, so that a terminal's Ctrl-C reaches the
runner alone. The runner passes it on to this process only, never to Spark's JVM or its
Python workers (a worker interrupted mid-task fails the batch in progress), and
forEachBatch stops the query once that batch has finished; a second one ends this
process at once. A pipe from the runner tells this process when the runner is gone: it
then stops as on SIGTERM and, if it has not ended within the stop bound, kills its
session (itself, Spark's JVM and workers), so no job outlives its runner.

    python -m kinesis_dstream.glue.job.script_process [--debug] [--install-modules] SCRIPT [ARGS...]
"""

from __future__ import annotations

import argparse
import logging
import os
import runpy
import signal
import sys
import threading
import time
import traceback
from collections.abc import Mapping, Sequence
from typing import Optional

from ...errors import KinesisDStreamError
from ...spark_internals import active_spark_context
from ..errors import GlueError, NotProvidedError
from ..logger import LOGGER_NAME
from ..streaming.foreach_batch import QUERY_STOP_TIMEOUT_S, STOP_WAIT_S, first_line
from .installing import install
from .parameters import INSTALL_FLAG
from .script_check import check_script
from .session import end_own_session

log = logging.getLogger(__name__)

#: The runner's end of a pipe, by number, in this process's environment.
RUNNER_FD_ENV = "KINESIS_DSTREAM_GLUE_RUNNER_FD"
#: The longest a job may take to end after a stop request: the batch in progress, the
#: query's stop, then the SparkContext's. Past it the runner (or, when the runner is
#: gone, this process) kills the job's session.
STOP_BOUND_S = STOP_WAIT_S + QUERY_STOP_TIMEOUT_S + 30.0
#: Overrides STOP_BOUND_S (seconds) in the runner's environment; passed to this process.
STOP_BOUND_ENV = "KINESIS_DSTREAM_GLUE_STOP_BOUND_S"
PROG = "kinesis-dstream"


class JobFailed(GlueError):
    """The script raised: its error's first line (``--debug``: the traceback)."""


def run_in_process(script: str, script_args: Sequence[str], install_modules: bool = False) -> int:
    """Run ``script`` here as Glue would (``sys.argv``, ``import awsglue``, Glue's job
    parameters applied first: :mod:`~kinesis_dstream.glue.job.startup`); its exit status
    (``sys.exit``), else 0. A write the layer does not provide is refused before anything
    starts (:mod:`~kinesis_dstream.glue.job.script_check`).
    Its SparkContext is stopped at the end."""
    path = os.path.abspath(script)
    if not os.path.isfile(path):
        raise GlueError(f"glue run: no script {script!r}")
    check_script(path)  # a write it cannot do: refused now, before any record is read
    from .startup import applied_job_parameters  # fetching and Spark's: not for the CLI

    install()
    with applied_job_parameters(script_args, install=install_modules):
        return _run_script(path, script_args)


def _run_script(path: str, script_args: Sequence[str]) -> int:
    saved = sys.argv
    sys.argv = [path, *script_args]
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return int(exc.code or 0)
        print(exc.code, file=sys.stderr)
        return 1
    except (GlueError, NotProvidedError):
        raise
    except Exception as exc:
        name = os.path.basename(path)
        raise JobFailed(f"{name} failed: {type(exc).__name__}: {first_line(exc)}") from exc
    finally:
        sys.argv = saved
        _stop_spark()
    return 0


def _stop_spark() -> None:
    """Nothing outlives the run: the script's SparkContext is stopped if still running."""
    sc = active_spark_context()
    if sc is not None:
        log.debug("stopping the script's SparkContext")
        sc.stop()


def stop_bound_s(env: Mapping[str, str]) -> float:
    """The stop bound: ``STOP_BOUND_ENV`` when set (a positive number), else STOP_BOUND_S."""
    text = env.get(STOP_BOUND_ENV)
    if text is None:
        return STOP_BOUND_S
    try:
        bound = float(text)
    except ValueError:
        bound = 0.0
    if not bound > 0:
        raise GlueError(f"{STOP_BOUND_ENV}={text!r}: give a number of seconds > 0")
    return bound


def _watch_runner(fd: int, bound_s: float) -> None:
    """When the runner's end of the pipe closes (it is gone): SIGTERM to this process (a
    graceful stop), and past ``bound_s`` the end of this process's session.

    The thread lives as long as the process: it ends with it.
    """

    def watch() -> None:
        try:
            os.read(fd, 1)  # blocks until the runner exits
        except OSError:
            pass
        log.warning("the runner is gone: stopping the job (ended in %g s at most)", bound_s)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(bound_s)
        log.error("the job did not end within %g s of its runner's end: killing it", bound_s)
        end_own_session()

    threading.Thread(target=watch, name="glue-runner-watch", daemon=True).start()


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog=f"{PROG} glue run")
    parser.add_argument("--debug", action="store_true")
    parser.add_argument(INSTALL_FLAG, dest="install_modules", action="store_true")
    parser.add_argument("script")
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger(LOGGER_NAME).setLevel(logging.INFO)  # the script's get_logger()
    level = logging.DEBUG if args.debug else logging.INFO
    logging.getLogger("kinesis_dstream.glue").setLevel(level)
    fd = os.environ.pop(RUNNER_FD_ENV, None)
    if fd is not None:
        _watch_runner(int(fd), stop_bound_s(os.environ))
    try:
        return run_in_process(args.script, args.script_args, args.install_modules)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one line, as the CLI prints every failure
        if args.debug:
            traceback.print_exc()
        text = (
            str(exc)
            if isinstance(exc, (KinesisDStreamError, ValueError))
            else (f"{type(exc).__name__}: {exc}")
        )
        print(f"{PROG}: error: {' '.join(text.split())}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
