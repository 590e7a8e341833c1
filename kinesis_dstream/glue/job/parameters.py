"""Glue's special job parameters, read from a job's arguments as Glue reads them.

A Glue job's arguments mix the script's own (``--JOB_NAME``, ``--my_arg``) with
parameters Glue itself acts on before the script starts (AWS's "Using job parameters in
AWS Glue jobs" page): ``--extra-py-files``, ``--additional-python-modules``, ``--conf``
and the rest. :func:`parse_job_parameters` picks Glue's out of the arguments; every
argument still reaches the script's ``sys.argv`` (the runner never removes one).

Each special parameter has one :class:`Handling` here (:data:`SPECIAL_PARAMETERS`): the
runner applies it (:mod:`~kinesis_dstream.glue.job.startup`), hands it to the script alone, or
accepts it as
meaning something only on Glue's service, named once at start with the reason.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

from ..errors import GlueError

#: The runner's option that installs missing ``--additional-python-modules`` into a
#: folder of the run's own (:mod:`.python_modules`).
INSTALL_FLAG = "--install-modules"


class Handling(enum.Enum):
    """What ``kinesis-dstream glue run`` does with one of Glue's special parameters."""

    #: The runner does what Glue does before the script starts.
    APPLIED = "applied"
    #: For the script (``getResolvedOptions``); the runner does nothing with it.
    SCRIPT = "script"
    #: Means something only on Glue's service: accepted, named once at start.
    SERVICE_ONLY = "service only"


@dataclass(frozen=True)
class Parameter:
    handling: Handling
    #: What it does under the runner (APPLIED, SCRIPT) or why it has no effect.
    reason: str
    #: Whether it always takes the next argument as its value, even one starting with
    #: ``--`` (``--python-modules-installer-option --upgrade``); else a bare flag
    #: (``--enable-metrics`` with no value) is allowed.
    takes_value: bool = True


_CLOUDWATCH = "CloudWatch logging of Glue's service; the job's log is the command's output here"
_METRICS = "metrics Glue's service publishes to CloudWatch; Spark's own UI and metrics apply here"
_CATALOG = (
    "Glue's Data Catalog as Spark's Hive metastore; catalog reads and writes of the Glue API "
    "call Glue's GetTable here"
)
_CAPACITY = "capacity of Glue's service; Spark's master and its executors decide it here"

#: Every special parameter this runner knows, by name (without ``--``). Anything else is
#: the script's.
SPECIAL_PARAMETERS: dict = {
    "extra-py-files": Parameter(Handling.APPLIED, "importable in the driver and on executors"),
    "additional-python-modules": Parameter(
        Handling.APPLIED, "checked installed; installed into a job-private folder on request"
    ),
    "python-modules-installer-option": Parameter(
        Handling.APPLIED, "pip options for --additional-python-modules"
    ),
    "extra-files": Parameter(Handling.APPLIED, "in the working directory of driver and executors"),
    "extra-jars": Parameter(Handling.APPLIED, "Spark's spark.jars"),
    "user-jars-first": Parameter(Handling.APPLIED, "spark.{driver,executor}.userClassPathFirst"),
    "conf": Parameter(Handling.APPLIED, "Spark configuration of the job's SparkContext"),
    "enable-spark-ui": Parameter(
        Handling.APPLIED, "with --spark-event-logs-path: Spark's event log", takes_value=False
    ),
    "spark-event-logs-path": Parameter(Handling.APPLIED, "spark.eventLog.dir"),
    "TempDir": Parameter(Handling.SCRIPT, "the script's temporary directory"),
    "job-bookmark-option": Parameter(
        Handling.SCRIPT,
        "streaming jobs keep their place in forEachBatch's checkpointLocation, not in bookmarks",
    ),
    "job-language": Parameter(
        Handling.SERVICE_ONLY, "the runner runs Python scripts only", takes_value=False
    ),
    "class": Parameter(Handling.SERVICE_ONLY, "the entry class of a Scala job; Python runs here"),
    "scriptLocation": Parameter(
        Handling.SERVICE_ONLY, "the script is the file given to glue run here"
    ),
    "enable-metrics": Parameter(Handling.SERVICE_ONLY, _METRICS, takes_value=False),
    "enable-observability-metrics": Parameter(Handling.SERVICE_ONLY, _METRICS, takes_value=False),
    "enable-job-insights": Parameter(
        Handling.SERVICE_ONLY, "Glue's job-run insights; errors are one line here", False
    ),
    "enable-continuous-cloudwatch-log": Parameter(Handling.SERVICE_ONLY, _CLOUDWATCH, False),
    "enable-continuous-log-filter": Parameter(Handling.SERVICE_ONLY, _CLOUDWATCH, False),
    "continuous-log-logGroup": Parameter(Handling.SERVICE_ONLY, _CLOUDWATCH),
    "continuous-log-logStreamPrefix": Parameter(Handling.SERVICE_ONLY, _CLOUDWATCH),
    "continuous-log-conversionPattern": Parameter(Handling.SERVICE_ONLY, _CLOUDWATCH),
    "enable-auto-scaling": Parameter(Handling.SERVICE_ONLY, _CAPACITY, takes_value=False),
    "auto-scale-within-microbatch": Parameter(Handling.SERVICE_ONLY, _CAPACITY, False),
    "worker-type": Parameter(Handling.SERVICE_ONLY, _CAPACITY),
    "number-of-workers": Parameter(Handling.SERVICE_ONLY, _CAPACITY),
    "enable-glue-datacatalog": Parameter(Handling.SERVICE_ONLY, _CATALOG, takes_value=False),
    "datalake-formats": Parameter(
        Handling.SERVICE_ONLY,
        "Glue's bundled Hudi, Delta Lake and Iceberg jars; give their packages with "
        "--extra-jars or spark.jars.packages in --conf here",
    ),
    "enable-s3-parquet-optimized-committer": Parameter(
        Handling.SERVICE_ONLY, "EMRFS's committer on Glue's service", takes_value=False
    ),
    "enable-rename-algorithm-v2": Parameter(
        Handling.SERVICE_ONLY, "EMRFS's rename algorithm on Glue's service", takes_value=False
    ),
    "write-shuffle-files-to-s3": Parameter(
        Handling.SERVICE_ONLY, "Glue's S3 shuffle plugin; Spark shuffles locally here", False
    ),
    "write-shuffle-spills-to-s3": Parameter(
        Handling.SERVICE_ONLY, "Glue's S3 shuffle plugin; Spark shuffles locally here", False
    ),
    "disable-proxy-v2": Parameter(
        Handling.SERVICE_ONLY, "Glue's VPC proxy; the AWS SDK's settings apply here", False
    ),
}

#: Glue Studio's transforms bucket: AWS-owned, one per account and region, e.g.
#: ``s3://aws-glue-studio-transforms-510798373988-prod-us-east-1/gs_common.py``.
GLUE_STUDIO_TRANSFORM = re.compile(
    r"^s3://aws-glue-studio-transforms-\d{12}-prod-[a-z0-9-]+/(?P<module>gs_\w+)\.py$"
)


@dataclass(frozen=True)
class JobParameters:
    """Glue's special parameters of one job run (lists in the order given)."""

    extra_py_files: tuple = ()
    additional_python_modules: tuple = ()
    installer_options: tuple = ()
    extra_files: tuple = ()
    extra_jars: tuple = ()
    user_jars_first: bool = False
    #: ``--conf`` pairs: ((key, value), ...), later ones winning as in spark-submit.
    conf: tuple = ()
    enable_spark_ui: bool = False
    spark_event_logs_path: Optional[str] = None
    job_bookmark_option: Optional[str] = None
    #: (``--name``, reason) of each service-only parameter given.
    no_effect: tuple = field(default=())


def _is_true(value: str) -> bool:
    return value.strip().lower() in ("", "true", "1", "yes")


def _paths(value: str) -> tuple:
    """A comma-separated list of complete paths (Glue's form for files and modules)."""
    return tuple(p.strip() for p in value.split(",") if p.strip())


#: Inside one ``--conf`` value, Glue takes further pairs after `` --conf ``
#: (``k=v --conf k2=v2``: the Iceberg setup AWS documents).
_CONF_SEPARATOR = re.compile(r"\s+--conf\s+")


def parse_conf(value: str) -> list:
    """The (key, value) pairs of one ``--conf`` value; GlueError names a pair without ``=``."""
    pairs = []
    for part in _CONF_SEPARATOR.split(value.strip()):
        part = part.strip()
        if part.startswith("--conf "):
            part = part[len("--conf ") :].strip()
        if not part:
            continue
        key, sep, setting = part.partition("=")
        if not sep or not key.strip():
            # only the first word: a setting mistyped "key value" may hold a secret
            named = part.split(None, 1)[0] if part.split() else part
            raise GlueError(
                f"glue run: --conf {named!r}... has no '=': Glue takes Spark settings as "
                "key=value (several as 'k1=v1 --conf k2=v2')"
            )
        pairs.append((key.strip(), setting.strip()))
    return pairs


def _special_arguments(argv: Sequence[str]) -> list:
    """(name, value) of each of Glue's special parameters in ``argv``, in order."""
    found = []
    i = 0
    while i < len(argv):
        token = argv[i]
        i += 1
        if not token.startswith("--"):
            continue
        name, has_equals, inline = token[2:].partition("=")
        parameter = SPECIAL_PARAMETERS.get(name)
        if parameter is None:
            continue
        if has_equals:
            found.append((name, inline))
        elif i < len(argv) and (parameter.takes_value or not argv[i].startswith("--")):
            found.append((name, argv[i]))
            i += 1
        elif parameter.handling is Handling.SCRIPT:
            continue  # the script's getResolvedOptions says what is missing
        elif parameter.takes_value:
            raise GlueError(f"glue run: job parameter --{name} has no value")
        else:
            found.append((name, ""))
    return found


def parse_job_parameters(argv: Sequence[str]) -> JobParameters:
    """Glue's special parameters in a job's arguments (``argv`` without the script).

    Values are Glue's: comma-separated complete paths for files, modules and jars;
    ``key=value`` for ``--conf`` (repeated, or several in one value); ``true``/``false``
    for switches (a switch without a value is on, as Glue's ``--enable-metrics``).
    """
    values: dict = {}
    conf: list = []
    no_effect: list = []
    for name, value in _special_arguments(argv):
        parameter = SPECIAL_PARAMETERS[name]
        if name == "conf":
            conf.extend(parse_conf(value))
        elif parameter.handling is Handling.SERVICE_ONLY:
            if f"--{name}" not in [n for n, _ in no_effect]:
                no_effect.append((f"--{name}", parameter.reason))
        else:
            values[name] = value  # the last one wins, as in getResolvedOptions
    bookmark = values.get("job-bookmark-option")
    if bookmark in ("job-bookmark-enable", "job-bookmark-pause"):
        no_effect.append(
            (f"--job-bookmark-option {bookmark}", SPECIAL_PARAMETERS["job-bookmark-option"].reason)
        )
    installer = values.get("python-modules-installer-option", "")
    return JobParameters(
        extra_py_files=_paths(values.get("extra-py-files", "")),
        additional_python_modules=_paths(values.get("additional-python-modules", "")),
        installer_options=tuple(installer.split()),
        extra_files=_paths(values.get("extra-files", "")),
        extra_jars=_paths(values.get("extra-jars", "")),
        user_jars_first=_is_true(values.get("user-jars-first", "false")),
        conf=tuple(conf),
        enable_spark_ui=_is_true(values.get("enable-spark-ui", "false")),
        spark_event_logs_path=values.get("spark-event-logs-path") or None,
        job_bookmark_option=bookmark,
        no_effect=tuple(no_effect),
    )


def glue_studio_module(path: str) -> Optional[str]:
    """The module name (``gs_now``) when ``path`` is in Glue Studio's transforms bucket."""
    match = GLUE_STUDIO_TRANSFORM.match(path)
    return match.group("module") if match else None
