"""``kinesis-dstream submit [--ignore-asl-jar] [spark-submit options] SCRIPT [ARGS ...]``.

spark-submit, with ``pyspark.streaming.kinesis`` served by this library in the driver
and the executors' Python workers (:mod:`.standin`): a script written for the JVM
kinesis-asl runs with no line changed. The spark-submit options before the script go to
spark-submit as given, in their order; everything after the script is the script's,
unchanged. The runner's own flags go before the script. Its first line (stderr) names
the ``pyspark.streaming.kinesis`` that runs (this library, its version and folder) and
the spark-submit; then the runner becomes that spark-submit (``exec``), so output,
signals and exit status are spark-submit's own.

Never silently over the JVM jar: a job that names kinesis-asl (``--jars``,
``--packages``, ``--driver-class-path``, their ``--conf`` keys, a properties file or
``spark-defaults.conf``, the Spark's ``jars/``) is refused in one line, unless
``--ignore-asl-jar`` says to run this library anyway (the jar stays on the classpath,
unused, and the first line says so).
"""

from __future__ import annotations

import argparse
import glob
import importlib.metadata
import os
import posixpath
import re
import sys
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, Optional

from ..errors import StandInError
from ..python_path import default_spark_python, put_first
from ..spark_conf import spark_defaults_path, spark_home
from .standin import SHIM_DIR

IGNORE_ASL_JAR = "--ignore-asl-jar"
DEBUG = "--debug"
#: The runner's flags (before the script); ``--debug`` is the CLI's.
RUNNER_FLAGS = (IGNORE_ASL_JAR, DEBUG)
HELP = ("-h", "--help")
#: spark-submit's options that take a value (Spark 4.x's SparkSubmitOptionParser; 3.5's
#: are a subset). Its switches (--verbose, --supervise, ...) and any option it does not
#: know are passed on alone, and spark-submit judges them.
VALUE_OPTIONS = frozenset(
    {
        "--archives",
        "--class",
        "--conf",
        "-c",
        "--deploy-mode",
        "--driver-class-path",
        "--driver-cores",
        "--driver-default-class-path",
        "--driver-java-options",
        "--driver-library-path",
        "--driver-memory",
        "--exclude-packages",
        "--executor-cores",
        "--executor-memory",
        "--extra-properties-file",
        "--files",
        "--jars",
        "--keytab",
        "--kill",
        "--master",
        "--name",
        "--num-executors",
        "--packages",
        "--principal",
        "--properties-file",
        "--proxy-user",
        "--py-files",
        "--queue",
        "--remote",
        "--repositories",
        "--status",
        "--total-executor-cores",
    }
)
_INLINE = re.compile(r"^(--[^=]+)=(.+)$", re.S)  # spark-submit's own --option=value rule
#: Where a job names jars: these options, and these Spark settings (--conf, files).
_JAR_OPTIONS = ("--jars", "--packages", "--driver-class-path")
_JAR_SETTINGS = (
    "spark.jars",
    "spark.jars.packages",
    "spark.driver.extraClassPath",
    "spark.executor.extraClassPath",
)
ASL = "kinesis-asl"  # in the names of the artifact, its assembly and their jars
#: The library's folder (this module is in ``asl/``).
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DESCRIPTION = """\
spark-submit, with pyspark.streaming.kinesis served by kinesis_dstream in the driver and
the executors' Python workers: a script written for the JVM kinesis-asl runs with no
line changed (PySpark 2.x-3.3's createStream arguments included).

Everything before the script is spark-submit's (--master, --conf, --py-files,
--packages, --driver-memory, ...: `spark-submit --help` lists them), passed on as given;
everything after it is the script's, unchanged. The runner's own flags go before the
script. The first line (stderr) names the pyspark.streaming.kinesis that runs and the
spark-submit (SPARK_HOME's, else pip's PySpark's); then spark-submit runs as usual.
Spark's Python is this one unless PYSPARK_PYTHON (or spark.pyspark.python) says.

A job that names the JVM kinesis-asl (--jars, --packages, --driver-class-path, their
--conf keys, a properties file, Spark's jars/) is refused unless --ignore-asl-jar.

Example:
  kinesis-dstream submit --master 'local[2]' kinesis_wordcount_asl.py \\
      my-app my-stream https://kinesis.us-east-1.amazonaws.com us-east-1
"""


def add_submit_command(commands: Any, common: argparse.ArgumentParser) -> None:
    """The ``submit`` subcommand of the top-level CLI. Its arguments after ``submit``
    are read by :func:`parse_submit_arguments` (argparse cannot tell spark-submit's
    options from the script's); this parser gives its help and reference page."""
    submit = commands.add_parser(
        "submit",
        parents=[common],
        help="spark-submit a kinesis-asl script unchanged, on kinesis_dstream",
        description=DESCRIPTION,
        usage="kinesis-dstream submit [--ignore-asl-jar] [spark-submit options] SCRIPT [ARGS ...]",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    submit.add_argument(
        IGNORE_ASL_JAR,
        action="store_true",
        help="run on kinesis_dstream although the job names the JVM kinesis-asl jar (left "
        "on the classpath, unused)",
    )
    submit.add_argument("script", nargs="?", metavar="SCRIPT", help="the PySpark script")
    submit.add_argument(
        "script_args", nargs=argparse.REMAINDER, metavar="ARGS", help="the script's arguments"
    )
    submit.set_defaults(func=_submit, submit_argv=())


def _submit(args: argparse.Namespace) -> int:
    run_submit(args.submit_argv, debug=getattr(args, "debug", False))


@dataclass(frozen=True)
class SubmitArguments:
    """A ``kinesis-dstream submit`` command line, read as spark-submit reads its own."""

    #: spark-submit's options, as given and in order (the runner's flags taken out).
    options: tuple = ()
    #: The primary resource (the script), None when only options were given.
    script: Optional[str] = None
    #: Everything after the script: the script's, unchanged.
    script_args: tuple = ()
    ignore_asl_jar: bool = False
    debug: bool = False
    help: bool = False
    #: (option, value) of each option that takes one, for the checks.
    values: tuple = field(default=(), compare=False)


def parse_submit_arguments(argv: Sequence[str]) -> SubmitArguments:
    """Split ``argv`` (what follows ``submit``) into the runner's flags, spark-submit's
    options and the script with its arguments."""
    options: list = []
    values: list = []
    flags: set = set()
    script: Optional[int] = None  # its index
    i = 0
    while i < len(argv) and script is None:
        token = argv[i]
        inline = _INLINE.match(token)
        if token in RUNNER_FLAGS or token in HELP:
            flags.add(token)
        elif inline and inline.group(1) in VALUE_OPTIONS:
            options.append(token)
            values.append((inline.group(1), inline.group(2)))
        elif token in VALUE_OPTIONS:
            options.append(token)
            if i + 1 < len(argv):  # (a missing value: spark-submit says so)
                i += 1
                options.append(argv[i])
                values.append((token, argv[i]))
        elif token.startswith("-"):
            options.append(token)  # a switch, or an option spark-submit will judge
        else:
            script = i
        i += 1
    return SubmitArguments(
        options=tuple(options),
        script=None if script is None else argv[script],
        script_args=() if script is None else tuple(argv[script + 1 :]),
        ignore_asl_jar=IGNORE_ASL_JAR in flags,
        debug=DEBUG in flags,
        help=bool(flags & set(HELP)),
        values=tuple(values),
    )


def _settings(values: Sequence[tuple]) -> list:
    """(key, value, where) of each ``--conf key=value``."""
    found = []
    for option, value in values:
        if option in ("--conf", "-c") and "=" in value:
            key, _, setting = value.partition("=")
            found.append((key.strip(), setting, f"{option} {key.strip()}"))
    return found


def _property_files(arguments: SubmitArguments, environ: Mapping[str, str]) -> list:
    """The properties files spark-submit will read, as it chooses them: the given ones,
    and spark-defaults.conf unless --properties-file replaces it (Spark 4: unless
    --load-spark-defaults asks for both)."""
    given = [
        v for o, v in arguments.values if o in ("--properties-file", "--extra-properties-file")
    ]
    replaced = any(o == "--properties-file" for o, _ in arguments.values)
    defaults = spark_defaults_path(environ)
    if defaults and (not replaced or "--load-spark-defaults" in arguments.options):
        given.append(defaults)
    return given


def _file_settings(path: str) -> list:
    from ..multilang.java_properties import read_properties_text

    try:
        with open(path, encoding="utf-8") as handle:
            settings = read_properties_text(handle.read())
    except (OSError, ValueError):  # spark-submit names an unreadable file itself
        return []
    return [(key, value, f"{key} in {path}") for key, value in settings.items()]


def _asl_entry(value: str) -> str:
    """The kinesis-asl entry of a comma-separated jar list, as it may be printed: a URL
    without its user, password and query (a repository's credentials or a presigned
    token), only its host and file name; a coordinate or a local path as it is."""
    entry = next(e.strip() for e in value.split(",") if ASL in e.lower())
    if "://" not in entry:
        return entry
    parsed = urllib.parse.urlsplit(entry)
    return f"{parsed.scheme}://{parsed.hostname or ''}/.../{posixpath.basename(parsed.path)}"


def asl_jar_named(arguments: SubmitArguments, environ: Mapping[str, str]) -> Optional[str]:
    """Where the job names the JVM kinesis-asl ("--packages org.apache.spark:spark-
    streaming-kinesis-asl_2.12:3.5.0", a file's setting, a jar in Spark's ``jars/``), or
    None. Only the kinesis-asl entry is named, never the rest of the value (a --conf or a
    jar URL may hold a secret: :func:`_asl_entry`)."""
    for option, value in arguments.values:
        if option in _JAR_OPTIONS and ASL in value.lower():
            return f"{option} {_asl_entry(value)}"
    settings = _settings(arguments.values)
    for path in _property_files(arguments, environ):
        settings += _file_settings(path)
    for key, value, where in settings:
        if key in _JAR_SETTINGS and ASL in value.lower():
            return f"{where}={_asl_entry(value)}"
    home = spark_home(environ)
    jars = sorted(glob.glob(os.path.join(home, "jars", f"*{ASL}*.jar"))) if home else []
    return jars[0] if jars else None


def spark_submit_path(environ: Mapping[str, str]) -> str:
    """The spark-submit of the Spark that runs the job (SPARK_HOME, else pip's PySpark)."""
    home = spark_home(environ)
    path = os.path.join(home, "bin", "spark-submit") if home else None
    if path is None or not os.path.isfile(path):
        where = f" ({path} is missing)" if path else ""
        raise StandInError(
            f"submit: no spark-submit{where}: set SPARK_HOME to a Spark, or "
            "pip install 'kinesis_dstream[spark]' for PySpark's"
        )
    return path


def submit_environment(environ: Mapping[str, str]) -> dict:
    """``environ`` with the stand-in's folder first on ``PYTHONPATH`` (the driver and,
    through Spark's JVM, the executors' workers inherit it) and Spark's Python this
    interpreter unless one is chosen."""
    env = dict(environ)
    put_first(SHIM_DIR, environ=env)
    default_spark_python(env)
    return env


def announcement(spark_submit: str, ignored_jar: Optional[str] = None) -> str:
    """The first line: which ``pyspark.streaming.kinesis`` runs, from where."""
    try:
        version = importlib.metadata.version("kinesis_dstream")
    except importlib.metadata.PackageNotFoundError:  # a source tree on PYTHONPATH
        version = "(not installed)"
    line = (
        f"kinesis-dstream submit: pyspark.streaming.kinesis is kinesis_dstream {version} "
        f"({PACKAGE_DIR}), not PySpark's (the JVM kinesis-asl); spark-submit: {spark_submit}"
    )
    if ignored_jar:
        line += f"; {ignored_jar} stays on the classpath, unused ({IGNORE_ASL_JAR})"
    return line


def submit_command(arguments: SubmitArguments, environ: Mapping[str, str]) -> tuple:
    """(the announcement, spark-submit's argv, its environment) for ``arguments``;
    StandInError (one line) when the job names the JVM jar without --ignore-asl-jar."""
    spark_submit = spark_submit_path(environ)
    jar = asl_jar_named(arguments, environ)
    if jar is not None and not arguments.ignore_asl_jar:
        raise StandInError(
            f"submit: this job names the JVM kinesis-asl ({jar}), which "
            "PySpark's own pyspark.streaming.kinesis uses under spark-submit: drop it to run "
            f"on kinesis_dstream, or add {IGNORE_ASL_JAR} to run on kinesis_dstream with the "
            "jar left unused (or run spark-submit itself to use the jar)"
        )
    script = [arguments.script] if arguments.script is not None else []
    argv = [spark_submit, *arguments.options, *script, *arguments.script_args]
    return announcement(spark_submit, jar), argv, submit_environment(environ)


def run_submit(argv: Sequence[str], debug: bool = False, environ: Any = None) -> NoReturn:
    """Announce, then become spark-submit (never returns; StandInError before that)."""
    environ = os.environ if environ is None else environ
    arguments = parse_submit_arguments(argv)
    line, command, env = submit_command(arguments, environ)
    print(line, file=sys.stderr, flush=True)
    if debug or arguments.debug:  # what the runner set; never the command (a --conf may
        # hold a secret)
        changed = [
            f"{k}={env[k]}" for k in ("PYTHONPATH", "PYSPARK_PYTHON") if env[k] != environ.get(k)
        ]
        print(f"kinesis-dstream submit: set {' '.join(changed)}", file=sys.stderr, flush=True)
    os.execve(command[0], command, env)
