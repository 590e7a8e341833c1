"""``kinesis-dstream glue run SCRIPT [--local] -- --JOB_NAME j --TempDir DIR ...``.

Runs a Glue script as Glue would, in a process of its own (:mod:`.script_process`):
``sys.argv`` is the script and the job's arguments (read with ``getResolvedOptions``),
``import awsglue`` gives this library's Glue layer, and a bare ``SparkContext()`` gets a
master: the one configured (``PYSPARK_SUBMIT_ARGS``'s ``--master``, ``MASTER``,
``spark.master`` in spark-defaults.conf), else ``local[*]`` (spark-submit's own
default). Glue's own job parameters among the job's arguments (``--extra-py-files``,
``--additional-python-modules``, ``--conf``...) are applied before the script starts
(:mod:`~kinesis_dstream.glue.job.startup`), and still reach its ``sys.argv``. ``--local`` runs
it on the
embedded local AWS (Kinesis, DynamoDB, Glue, S3 on moto's server) and points the AWS
SDK of the driver and the executors at it; without it the AWS SDK's usual
configuration applies (credentials, region, ``AWS_ENDPOINT_URL``). Ctrl-C or SIGTERM
is passed on to the script's process alone: forEachBatch stops the query after the
batch in progress; the next run resumes from its checkpoint. A second one ends the job
at once; a job that has not ended within its stop bound is killed, and nothing it
started outlives the command.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any, Optional

from ...python_path import default_spark_python
from ...spark_conf import spark_defaults_path
from ...stop_signals import StopRequests, counted_stop_signals
from ..errors import GlueError
from .parameters import INSTALL_FLAG
from .script_process import RUNNER_FD_ENV, STOP_BOUND_ENV, stop_bound_s
from .session import KILL_WAIT_S, end_session

log = logging.getLogger(__name__)

DEFAULT_MASTER = "local[*]"
RUNNER_FLAGS = ("--local", "--debug", INSTALL_FLAG)
#: How often the runner looks at its signals while the script runs.
POLL_S = 0.5
#: After a second stop request, how long the script's process has to end before its
#: session is killed.
FORCE_WAIT_S = 10.0
#: When the script's process has ended, how long what it left (Spark's JVM and workers,
#: normally ending by themselves) has before SIGKILL.
LEFTOVER_GRACE_S = 5.0

DESCRIPTION = """\
Run an AWS Glue streaming script as Glue would.

The job's arguments (after --) are read by the script with getResolvedOptions;
Glue's own job parameters among them (--extra-py-files, --additional-python-modules,
--extra-files, --extra-jars, --conf, ...) are applied first, as Glue does;
runner options (--local, --debug, --install-modules) go before the script or between
it and --;
`import awsglue` gives kinesis_dstream's Glue layer; a bare SparkContext() gets the
master you configured (--master in PYSPARK_SUBMIT_ARGS, MASTER, spark.master in
spark-defaults.conf), else local[*].

--install-modules installs the --additional-python-modules that are not installed into
a folder of this run's own (without it, they are named with the pip command).

--local runs it on the embedded local AWS (Kinesis, DynamoDB, Glue and S3 on moto's
server), for this run only. Without it the AWS SDK's usual configuration applies
(credentials, region, AWS_ENDPOINT_URL).

Ctrl-C or SIGTERM during forEachBatch lets the batch in progress finish, stops the
query and exits 0; the next run resumes from the query's checkpoint. A second Ctrl-C
stops the job at once (the batch in progress runs again at the next start); a job
still running 3 minutes after the first is killed, with Spark's processes.

Examples:
  kinesis-dstream glue run job.py -- --JOB_NAME my_job --TempDir /tmp/glue-temp
  kinesis-dstream glue run job.py --local -- --JOB_NAME my_job --TempDir /tmp/glue-temp
"""


def add_glue_command(commands: Any, common: argparse.ArgumentParser) -> None:
    """The ``glue`` subcommand (``glue run``) of the top-level CLI."""
    glue = commands.add_parser(
        "glue", parents=[common], help="run AWS Glue streaming scripts on any PySpark"
    )
    actions = glue.add_subparsers(dest="glue_command", required=True, metavar="{run}")
    run = actions.add_parser(
        "run",
        parents=[common],
        help="run a Glue script as Glue would",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "--local",
        action="store_true",
        help="on the embedded local AWS (moto's server: Kinesis, DynamoDB, Glue, S3)",
    )
    run.add_argument(
        INSTALL_FLAG,
        dest="install_modules",
        action="store_true",
        help="pip-install missing --additional-python-modules into a folder of this run's own",
    )
    run.add_argument("script", help="the Glue script (a Python file)")
    run.add_argument(
        "script_args",
        nargs=argparse.REMAINDER,
        metavar="-- ARGS",
        help="the job's arguments, after --, as Glue passes them (--JOB_NAME j --TempDir DIR ...)",
    )
    run.set_defaults(func=run_command)


def split_arguments(rest: Sequence[str]) -> tuple:
    """(runner flags, the script's arguments): before and after the first ``--``.

    Without ``--``, everything after the script is the script's, but a runner flag there
    is refused: ``glue run job.py --local --JOB_NAME j`` would otherwise hand ``--local``
    to the script and run the job against the AWS the environment names.
    """
    rest = list(rest)
    if "--" not in rest:
        misplaced = [f for f in rest if f in RUNNER_FLAGS]
        if misplaced:
            named = " ".join(misplaced)
            raise GlueError(
                f"glue run: {named} after the script with no '--' would go to the script: put "
                f"runner options before the script or before '--' (glue run job.py {named} "
                "-- --JOB_NAME ...), and the script's arguments after '--'"
            )
        return [], rest
    cut = rest.index("--")
    flags, script_args = rest[:cut], rest[cut + 1 :]
    unknown = [f for f in flags if f not in RUNNER_FLAGS]
    if unknown:
        raise GlueError(
            f"glue run: {unknown} before '--' are not runner options ({', '.join(RUNNER_FLAGS)}); "
            "put the script's arguments after '--'"
        )
    return flags, script_args


def run_command(args: argparse.Namespace) -> int:
    flags, script_args = split_arguments(args.script_args)
    args.local = args.local or "--local" in flags
    args.debug = getattr(args, "debug", False) or "--debug" in flags
    install_modules = args.install_modules or INSTALL_FLAG in flags
    return run_script(
        args.script,
        script_args,
        local=args.local,
        debug=args.debug,
        install_modules=install_modules,
    )


#: The user's AWS SDK settings that --local removes from the script's environment: each
#: could send a call elsewhere than the local AWS (a service's endpoint, a profile with
#: its own endpoint or credentials, a session token) or make the SDK ignore the endpoint.
USERS_AWS_SETTINGS = (
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
)


def is_users_aws_setting(name: str) -> bool:
    """Whether --local removes environment variable ``name`` (see USERS_AWS_SETTINGS)."""
    return name in USERS_AWS_SETTINGS or name.startswith("AWS_ENDPOINT_URL_")


def master_configured(env: Mapping[str, str]) -> bool:
    """Whether Spark will find a master the user configured."""
    if "--master" in env.get("PYSPARK_SUBMIT_ARGS", "") or env.get("MASTER"):
        return True
    defaults = spark_defaults_path(env)
    if defaults is None:
        return False
    with open(defaults, encoding="utf-8") as handle:
        return any(line.split()[:1] == ["spark.master"] for line in handle)


def prepare_spark_environment(env: MutableMapping[str, str]) -> None:
    """Spark's Python workers on this interpreter; a master when none is configured."""
    default_spark_python(env)
    if not master_configured(env):
        submit = env.get("PYSPARK_SUBMIT_ARGS") or "pyspark-shell"
        env["PYSPARK_SUBMIT_ARGS"] = f"--master {DEFAULT_MASTER} {submit}"


def run_script(
    script: str,
    script_args: Sequence[str],
    local: bool = False,
    debug: bool = False,
    install_modules: bool = False,
) -> int:
    """Run ``script`` in a process of its own, as Glue would; its exit status."""
    path = os.path.abspath(script)
    if not os.path.isfile(path):
        raise GlueError(f"glue run: no script {script!r}")
    env = dict(os.environ)
    with contextlib.ExitStack() as stack:
        if local:
            from ...local import LocalAWS

            aws = stack.enter_context(LocalAWS())
            for name in [n for n in env if is_users_aws_setting(n)]:
                del env[name]  # nothing of the user's may lead the SDK to another AWS
            env.update(aws.env())  # the script's driver, and its executors through it
            print(f"Local AWS (moto) at {aws.endpoint_url}; for other AWS tools:", flush=True)
            for name, value in aws.env().items():
                print(f"  export {name}={value}", flush=True)
        prepare_spark_environment(env)
        command = [sys.executable, "-m", "kinesis_dstream.glue.job.script_process"]
        command += ["--debug"] if debug else []
        command += [INSTALL_FLAG] if install_modules else []
        return _supervise([*command, path, *script_args], env)


def _supervise(command: list, env: dict) -> int:
    """Start the script's process in a session of its own and answer Ctrl-C or SIGTERM
    for it; returns its exit status (128 + N when signal N ended it).

    The first request is passed on to the script's process alone (forEachBatch stops
    after the batch in progress); a second one ends it at once (SIGTERM, which it no
    longer catches); and if it has not ended within the stop bound of the first, or
    :data:`FORCE_WAIT_S` of the second, its session is killed. Whatever it leaves when it
    ends (Spark's JVM, its workers) is ended too: no process outlives the command.
    """
    bound_s = stop_bound_s(env)
    env[STOP_BOUND_ENV] = f"{bound_s:g}"
    read_end, write_end = os.pipe()
    env[RUNNER_FD_ENV] = str(read_end)
    with counted_stop_signals() as requests:
        try:
            child = subprocess.Popen(command, env=env, pass_fds=(read_end,), start_new_session=True)
        finally:
            os.close(read_end)
        try:
            return _wait(child, requests, bound_s)
        finally:
            os.close(write_end)  # the script's process stops if it is still running
            left = end_session(child.pid, LEFTOVER_GRACE_S)
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=KILL_WAIT_S)  # reaped (it was killed if still there)
            if left:
                log.info("ended %d processes the job left behind (Spark's JVM, workers)", left)


def _wait(child: Any, requests: StopRequests, bound_s: float) -> int:
    answered = 0
    deadline: Optional[float] = None
    while True:
        try:
            code = child.wait(timeout=POLL_S)
            return code if code >= 0 else 128 - code
        except subprocess.TimeoutExpired:
            pass
        while answered < requests.count:
            answered += 1
            now = time.monotonic()
            if answered == 1:
                log.warning(
                    "stopping the job: the query stops after the batch in progress (Ctrl-C "
                    "again to stop it at once)"
                )
                child.send_signal(signal.SIGINT)
                deadline = now + bound_s
            elif answered == 2:
                log.warning("stopping the job at once")
                child.send_signal(signal.SIGTERM)
                deadline = min(deadline or now + FORCE_WAIT_S, now + FORCE_WAIT_S)
            else:
                deadline = now
        if deadline is not None and time.monotonic() >= deadline:
            log.error("the job did not end in time after the stop: killing its processes")
            end_session(child.pid, grace_s=0)
            deadline = None  # the next wait returns its status
