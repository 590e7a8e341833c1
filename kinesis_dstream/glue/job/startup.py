"""Glue's job parameters applied before the script starts, in the script's process.

The script builds its own SparkContext (``SparkContext()``, ``SparkContext.getOrCreate()``
or ``SparkSession.builder.getOrCreate()``); each launches Spark's JVM through
spark-submit with ``PYSPARK_SUBMIT_ARGS``. So what Glue gives Spark reaches it there:
``--py-files`` (``--extra-py-files``: ``spark.submit.pyFiles``, on the executors'
Python path), ``--files`` (``--extra-files``: ``spark.files``, in the executors' working
directory), ``--jars`` (``--extra-jars``) and a ``--conf`` for each Spark setting
(``--conf``, ``--user-jars-first``, the event log of ``--enable-spark-ui``). They come
after the user's own ``PYSPARK_SUBMIT_ARGS`` (so the job's settings win, as on Glue) and
before its ``pyspark-shell``.

Before the script's first line, ``--extra-py-files`` are importable in the driver (Glue
Studio scripts import their transform modules at the top, before the SparkContext),
``--extra-files`` are in the working directory, and ``--additional-python-modules`` are
checked (or installed into the run's own folder with ``--install-modules``).
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import shlex
import sys
import tempfile
from collections.abc import Iterator, MutableMapping, Sequence
from typing import Optional

from ...sql.ends.s3 import is_s3_url
from .files import JobFolder, WorkingDirectoryFiles, fetch_all, python_files
from .installing import SHIM_DIR, add_python_folder
from .parameters import JobParameters, parse_job_parameters
from .python_modules import check_modules, install_modules, module_requests

log = logging.getLogger(__name__)

SUBMIT_ARGS_ENV = "PYSPARK_SUBMIT_ARGS"
#: spark-submit's primary resource for a Python shell (PySpark's own default).
PYSPARK_SHELL = "pyspark-shell"
#: Where Spark's event log goes when ``--spark-event-logs-path`` is on S3 and Spark has
#: no S3 filesystem.
LOCAL_EVENT_LOGS = os.path.join(tempfile.gettempdir(), "kinesis_dstream-spark-events")
_LIST_OPTIONS = ("--py-files", "--files", "--jars")


def submit_args(existing: Optional[str], lists: dict, conf: Sequence[tuple]) -> str:
    """``existing`` (the user's ``PYSPARK_SUBMIT_ARGS``) with ``lists`` ({"--py-files":
    [...], ...}) merged into its own lists of that option, and ``conf`` pairs after its
    settings; ``pyspark-shell`` last."""
    tokens = shlex.split(existing or "")
    if tokens[-1:] == [PYSPARK_SHELL]:
        tokens = tokens[:-1]
    merged: dict = {name: [] for name in _LIST_OPTIONS}
    kept = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        name, has_equals, inline = token.partition("=")
        if name in merged and has_equals:
            merged[name].extend(inline.split(","))
        elif token in merged and i + 1 < len(tokens):
            merged[token].extend(tokens[i + 1].split(","))
            i += 1
        else:
            kept.append(token)
        i += 1
    for name in _LIST_OPTIONS:
        paths = [p for p in [*merged[name], *lists.get(name, [])] if p]
        if paths:
            kept += [name, ",".join(paths)]
    for key, value in conf:
        kept += ["--conf", f"{key}={value}"]
    return shlex.join([*kept, PYSPARK_SHELL])


def _hadoop_aws_available(jars: Sequence[str], conf: dict) -> bool:
    """Whether Spark will have hadoop-aws (Hadoop's S3A filesystem) on its classpath."""
    import pyspark

    homes = [os.path.dirname(pyspark.__file__), os.environ.get("SPARK_HOME") or ""]
    found = any(glob.glob(os.path.join(h, "jars", "hadoop-aws-*.jar")) for h in homes if h)
    named = [*jars, conf.get("spark.jars", ""), conf.get("spark.jars.packages", "")]
    return found or any("hadoop-aws" in text for text in named)


def event_log_conf(params: JobParameters, jars: Sequence[str]) -> list:
    """Spark's event log settings for ``--enable-spark-ui`` with ``--spark-event-logs-path``.

    An ``s3://`` path where Spark has no filesystem for it (pip-installed PySpark: no
    hadoop-aws; ``s3://`` also needs ``spark.hadoop.fs.s3.impl``) is the nearest thing:
    a local folder, said in one warning."""
    path = params.spark_event_logs_path
    if not params.enable_spark_ui or not path:
        return []
    conf = dict(params.conf)
    if is_s3_url(path):
        scheme = path.split("://", 1)[0].lower()
        usable = _hadoop_aws_available(jars, conf) and (
            scheme == "s3a" or "spark.hadoop.fs.s3.impl" in conf
        )
        if not usable:
            log.warning(
                "--spark-event-logs-path %s: this Spark has no filesystem for %s:// (no "
                "hadoop-aws): Spark's event log goes to %s instead (open it with Spark's "
                "history server)",
                path,
                scheme,
                LOCAL_EVENT_LOGS,
            )
            path = LOCAL_EVENT_LOGS
    if "://" not in path or path.startswith("file:"):
        os.makedirs(path[len("file:") :] if path.startswith("file:") else path, exist_ok=True)
    return [("spark.eventLog.enabled", "true"), ("spark.eventLog.dir", path)]


def _report_no_effect(params: JobParameters) -> None:
    if params.no_effect:
        named = "; ".join(f"{name} ({reason})" for name, reason in params.no_effect)
        log.warning("job parameters with no effect under glue run: %s", named)


@contextlib.contextmanager
def applied_job_parameters(
    argv: Sequence[str],
    install: bool = False,
    environ: Optional[MutableMapping[str, str]] = None,
) -> Iterator[JobParameters]:
    """Apply Glue's special parameters in ``argv`` (the job's arguments) to this
    process before the script runs: files fetched, modules checked (or installed with
    ``install``), the driver's ``sys.path`` and ``PYSPARK_SUBMIT_ARGS`` set. What it
    fetched or copied is removed when the block ends. GlueError (one line) when a
    parameter cannot be honoured."""
    environ = os.environ if environ is None else environ
    params = parse_job_parameters(argv)
    _report_no_effect(params)
    job = JobFolder()
    working_files: Optional[WorkingDirectoryFiles] = None
    try:
        requests = module_requests(params.additional_python_modules, job)
        if install:
            target = install_modules(requests, params.installer_options, job)
            if target is not None:
                add_python_folder(target)
        else:
            check_modules(requests, params.installer_options)
        modules = python_files(params.extra_py_files, job)
        files = fetch_all("--extra-files", params.extra_files, job, "files")
        jars = fetch_all("--extra-jars", params.extra_jars, job, "jars")
        conf = []
        if params.user_jars_first:
            conf += [("spark.driver.userClassPathFirst", "true")]
            conf += [("spark.executor.userClassPathFirst", "true")]
        conf += event_log_conf(params, jars)
        conf += list(params.conf)
        lists = {"--py-files": modules.spark_paths, "--files": files, "--jars": jars}
        if conf or any(lists.values()):
            # (never logged: a --conf may hold a secret)
            environ[SUBMIT_ARGS_ENV] = submit_args(environ.get(SUBMIT_ARGS_ENV), lists, conf)
        at = 1 if sys.path[:1] == [SHIM_DIR] else 0
        sys.path[at:at] = [p for p in modules.driver_paths if p not in sys.path]
        working_files = WorkingDirectoryFiles(files)
        yield params
    finally:
        if working_files is not None:
            working_files.remove()
        job.close()
