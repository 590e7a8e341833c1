"""``--additional-python-modules``: the Python packages a Glue job asks for.

Glue installs them with pip at each run. Here, packages already installed are used; the
missing ones (or installed at a version the job does not accept) fail at start in one
line naming them and the pip command that installs them: the runner never installs
into the user's environment on its own. With the runner's ``--install-modules`` it
installs them into a folder of the run's own instead (``pip install --target``, with
``--python-modules-installer-option``'s options), put on the driver's and the
executors' Python path.

Glue's entries, comma-separated: ``name``, ``name==1.2``, ``name>=1.2`` (PEP 440
specifiers, extras as ``name[extra]``), or the ``s3://`` (or local) path of a wheel, a
zip of wheels, or a requirements file (``.txt``).
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import re
import shlex
import subprocess
import sys
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

from ..errors import GlueError
from .files import JobFolder, fetch
from .parameters import INSTALL_FLAG

log = logging.getLogger(__name__)

PARAMETER = "--additional-python-modules"
#: The longest pip may take to install them.
PIP_TIMEOUT_S = 900.0

_REQUIREMENT = re.compile(
    r"^(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(?P<extras>\[[^\]]*\])?"
    r"\s*(?P<spec>(?:[<>=!~]=?|===)[^;]*)?\s*(?:;.*)?$"
)
_URL_PASSWORD = re.compile(r"(://)[^/@\s]+@")
#: A wheel's file name: ``{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl``.
_WHEEL = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)(-[^-]+)?-[^-]+-[^-]+-[^-]+\.whl$")


@dataclass(frozen=True)
class ModuleRequest:
    """One package the job asks for: a distribution name and the versions it accepts."""

    name: str
    #: PEP 440 specifiers (``==1.2``, ``>=1,<2``), empty for any version.
    specifier: str = ""
    extras: str = ""
    #: The local wheel that provides it, when the job gave one.
    wheel: Optional[str] = None

    def pip_argument(self) -> str:
        return self.wheel or f"{self.name}{self.extras}{self.specifier}"


def parse_requirement(text: str) -> ModuleRequest:
    """``name[extras]<specifiers>`` as Glue (pip) takes it; GlueError names a bad entry."""
    match = _REQUIREMENT.match(text.strip())
    if not match:
        raise GlueError(
            f"glue run: {PARAMETER} {text.strip()!r}: give name, name==version or "
            "name>=version (comma-separated), or the s3:// path of a wheel"
        )
    return ModuleRequest(
        match.group("name"), (match.group("spec") or "").strip(), match.group("extras") or ""
    )


def _wheel_request(local: str, shown: str) -> ModuleRequest:
    match = _WHEEL.match(os.path.basename(local))
    if not match:
        raise GlueError(f"glue run: {PARAMETER} {shown}: not a wheel's file name")
    return ModuleRequest(
        match.group("name").replace("_", "-"), f"=={match.group('version')}", wheel=local
    )


def _requirements_file(local: str) -> list:
    with open(local, encoding="utf-8") as handle:
        lines = [line.split("#", 1)[0].strip() for line in handle]
    return [parse_requirement(line) for line in lines if line and not line.startswith("-")]


def module_requests(entries: Sequence[str], job: JobFolder) -> list:
    """Every package ``entries`` asks for (wheels, zips of wheels and requirements files
    fetched into the job's folder)."""
    requests = []
    for entry in entries:
        lower = entry.lower()
        if not lower.endswith((".whl", ".zip", ".txt")):
            requests.append(parse_requirement(entry))
            continue
        local = fetch(PARAMETER, entry, job.sub("python-modules-source"))
        if lower.endswith(".whl"):
            requests.append(_wheel_request(local, entry))
        elif lower.endswith(".txt"):
            requests.extend(_requirements_file(local))
        else:  # a zip of wheels (Glue 5)
            wheels = job.sub("python-modules-wheels")
            with zipfile.ZipFile(local) as archive:
                for member in archive.namelist():
                    if member.lower().endswith(".whl"):
                        path = archive.extract(member, wheels)
                        requests.append(_wheel_request(path, f"{entry}!{member}"))
    return requests


def _specifier_set(text: str) -> Any:
    """packaging's SpecifierSet (packaging, else pip's own copy); None when neither is
    importable (then only presence is checked)."""
    try:
        from packaging.specifiers import SpecifierSet
    except ImportError:
        try:
            from pip._vendor.packaging.specifiers import SpecifierSet  # type: ignore
        except ImportError:
            return None
    return SpecifierSet(text)


def unmet(request: ModuleRequest) -> Optional[str]:
    """Why ``request`` is not met by what is installed (``"not installed"``, ``"1.0
    installed"``), or None."""
    try:
        version = importlib.metadata.version(request.name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"
    if request.specifier:
        specifiers = _specifier_set(request.specifier)
        if specifiers is not None and not specifiers.contains(version, prereleases=True):
            return f"{version} installed"
    return None


def _shown(command: Sequence[str]) -> str:
    """A command as the user would type it, with any password in an index URL (an
    installer option) hidden."""
    return _URL_PASSWORD.sub(r"\1***@", shlex.join(command))


def pip_command(requests: Sequence[ModuleRequest], options: Sequence[str]) -> list:
    return [sys.executable, "-m", "pip", "install", *options, *(r.pip_argument() for r in requests)]


def check_modules(requests: Sequence[ModuleRequest], options: Sequence[str]) -> list:
    """The requests not met; GlueError naming them and the pip command when there are."""
    missing = [(r, why) for r in requests if (why := unmet(r)) is not None]
    if not missing:
        return []
    named = ", ".join(
        f"{r.pip_argument() if r.wheel is None else r.name + r.specifier} ({why})"
        for r, why in missing
    )
    command = _shown(pip_command([r for r, _ in missing], options))
    raise GlueError(
        f"glue run: {PARAMETER} asks for {named}; Glue installs them at each run, this "
        f"runner never installs into your environment: install them with `{command}`, or "
        f"run with glue run {INSTALL_FLAG} to install them into a folder of this run's own"
    )


def install_modules(
    requests: Sequence[ModuleRequest], options: Sequence[str], job: JobFolder
) -> Optional[str]:
    """pip-install the requests not met into a folder of the job's own; that folder (to
    put on the Python paths), or None when every request is met."""
    missing = [r for r in requests if unmet(r) is not None]
    if not missing:
        return None
    target = job.sub("python-modules")
    command = pip_command(missing, options)
    command[4:4] = ["--target", target]
    log.info("%s: installing %s into %s", PARAMETER, ", ".join(r.name for r in missing), target)
    try:
        done = subprocess.run(command, timeout=PIP_TIMEOUT_S, stdout=sys.stderr)
    except subprocess.TimeoutExpired:
        raise GlueError(
            f"glue run: {PARAMETER}: pip did not finish within {PIP_TIMEOUT_S:g} s"
        ) from None
    if done.returncode != 0:
        raise GlueError(
            f"glue run: {PARAMETER}: `{_shown(command)}` failed (exit {done.returncode}; "
            "pip's output above)"
        )
    return target
