"""The files a Glue job's parameters bring (``--extra-py-files``, ``--extra-files``,
``--extra-jars``): ``s3://`` paths fetched with the job's AWS settings (the AWS SDK's
configuration, as every other call of the job), local paths taken where they are, all
before the script starts.

Fetched files go into a folder of the job's own (:class:`JobFolder`), removed when the
job ends. A path into Glue Studio's transforms bucket is never fetched: it names one of
this library's own modules (``gs_now`` and the like, beside the ``awsglue`` shim, so
already on the driver's and the executors' Python path), or fails at start naming the
module this library does not provide.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional
from urllib.parse import urlparse

from ...sql.ends.s3 import is_s3_url, parse_s3_url
from ..errors import DOCS_PAGE, GlueError
from ..sinks.file_stores import S3Store
from .installing import SHIM_DIR
from .parameters import glue_studio_module

log = logging.getLogger(__name__)

#: Where this library's Glue Studio transform modules (``gs_*.py``) are.
GLUE_STUDIO_MODULES_DIR = SHIM_DIR
#: What Spark's ``addPyFile`` puts on workers' paths as an archive (PySpark's
#: PACKAGE_EXTENSIONS); a wheel is a zip archive, so it travels as one.
ARCHIVE_EXTENSIONS = (".zip", ".egg", ".jar")


class JobFolder:
    """A folder of the job's own for what its parameters bring; :meth:`close` removes it."""

    def __init__(self) -> None:
        self.path = tempfile.mkdtemp(prefix="kinesis_dstream-glue-job-")

    def sub(self, name: str) -> str:
        folder = os.path.join(self.path, name)
        os.makedirs(folder, exist_ok=True)
        return folder

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def _local_path(parameter: str, path: str) -> str:
    parsed = urlparse(path)
    local = parsed.path if parsed.scheme == "file" else path
    if parsed.scheme not in ("", "file") and len(parsed.scheme) > 1:
        raise GlueError(
            f"glue run: {parameter} {path}: the runner fetches s3:// paths and reads local ones"
        )
    if not os.path.isfile(local):
        raise GlueError(
            f"glue run: {parameter} {path}: no such file (Glue takes files, not folders)"
        )
    return os.path.abspath(local)


def _new_file(parameter: str, path: str, folder: str, name: str) -> str:
    """``folder/name``, which must not be there yet: Spark ships files by name, so two of
    one name would be one."""
    target = os.path.join(folder, name)
    if os.path.exists(target):
        raise GlueError(f"glue run: {parameter} {path}: another file of the job is named {name}")
    return target


def fetch(parameter: str, path: str, folder: str, name: Optional[str] = None) -> str:
    """The local path of ``path``: an ``s3://`` object downloaded into ``folder`` (as
    ``name``, else its own name), a local file where it is. GlueError names the
    parameter, the path and why."""
    if not is_s3_url(path):
        return _local_path(parameter, path)
    try:
        bucket, key = parse_s3_url(path)
    except ValueError as exc:
        raise GlueError(f"glue run: {parameter}: {exc}") from None
    if not key or key.endswith("/"):
        raise GlueError(f"glue run: {parameter} {path}: Glue takes files, not folders")
    target = _new_file(parameter, path, folder, name or os.path.basename(key))
    store = S3Store(bucket, "")
    s3 = store.client()
    try:
        response = store.call("GetObject", key, lambda: s3.get_object(Bucket=bucket, Key=key))
        with open(target, "wb") as handle:
            shutil.copyfileobj(response["Body"], handle)
    except Exception as exc:  # past the retries, or not retriable: one line
        raise GlueError(f"glue run: {parameter} {path}: {exc}") from None
    log.debug("%s: fetched %s", parameter, path)
    return target


@dataclass
class PythonFiles:
    """``--extra-py-files`` made local: what Spark ships (``spark.submit.pyFiles``) and
    what goes on the driver's ``sys.path`` before the script starts."""

    #: Local paths for Spark (each worker puts its copy on its path).
    spark_paths: list = field(default_factory=list)
    #: Entries for the driver's ``sys.path``: the folder of the single modules, archives.
    driver_paths: list = field(default_factory=list)
    #: Glue Studio modules served by this library.
    glue_studio: list = field(default_factory=list)


def python_files(paths: Sequence[str], job: JobFolder) -> PythonFiles:
    """Make ``--extra-py-files`` local. A ``.py`` module is copied into a folder of the
    job's own (so that its neighbours do not become importable), an archive (``.zip``,
    ``.egg``) is used where it is; a ``.whl`` is copied as a ``.zip`` (Spark ships only
    those extensions as archives). Glue Studio's transform modules are resolved to this
    library's; the ones it does not provide fail here, all named in one line."""
    found = PythonFiles()
    missing = []
    others = []
    for path in paths:  # before any download: a module not provided fails at once
        studio = glue_studio_module(path)
        if studio is None:
            others.append(path)
        elif os.path.isfile(os.path.join(GLUE_STUDIO_MODULES_DIR, studio + ".py")):
            found.glue_studio.append(studio)
        else:
            missing.append(studio)
    if missing:
        raise GlueError(
            f"glue run: --extra-py-files names Glue Studio's transform modules "
            f"{', '.join(missing)}, which this library does not provide (its Glue Studio "
            f"modules: {DOCS_PAGE})"
        )
    modules = None
    for path in others:
        modules = modules or job.sub("py-files")
        name = os.path.basename(urlparse(path).path)
        wheel = name.lower().endswith(".whl")
        as_name = name + ".zip" if wheel else name
        local = fetch("--extra-py-files", path, modules, as_name)
        if (wheel or not name.lower().endswith(ARCHIVE_EXTENSIONS)) and (
            os.path.dirname(local) != modules
        ):  # a local module or wheel: a copy in the job's folder
            copy = _new_file("--extra-py-files", path, modules, as_name)
            shutil.copyfile(local, copy)
            local = copy
        found.spark_paths.append(local)
        entry = local if local.lower().endswith(ARCHIVE_EXTENSIONS) else modules
        if entry not in found.driver_paths:
            found.driver_paths.append(entry)
    return found


def fetch_all(parameter: str, paths: Sequence[str], job: JobFolder, sub: str) -> list:
    """Each of ``paths`` made local (``s3://`` ones into the job's folder ``sub``)."""
    return [fetch(parameter, p, job.sub(sub)) for p in paths]


class WorkingDirectoryFiles:
    """``--extra-files`` in the driver's working directory, as Glue copies them there;
    the copies this run made are removed when it ends (:meth:`remove`). A different
    file of the same name already there is never overwritten: that fails in one line."""

    def __init__(self, local_paths: Sequence[str], directory: str = ".") -> None:
        self.made: list = []
        directory = os.path.abspath(directory)
        for local in local_paths:
            target = os.path.join(directory, os.path.basename(local))
            if os.path.abspath(local) == target:
                continue  # already there
            if os.path.exists(target):
                if _same_content(local, target):
                    continue
                self.remove()
                raise GlueError(
                    f"glue run: --extra-files {os.path.basename(local)}: a different file of "
                    f"that name is in the working directory ({target}); the runner will not "
                    "overwrite it: run the job from another directory"
                )
            shutil.copyfile(local, target)
            self.made.append(target)

    def remove(self) -> None:
        for path in self.made:
            try:
                os.remove(path)
            except OSError as exc:
                log.warning("could not remove %s (--extra-files): %s", path, exc)
        self.made = []


def _same_content(a: str, b: str) -> bool:
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, "rb") as first, open(b, "rb") as second:
        return first.read() == second.read()
