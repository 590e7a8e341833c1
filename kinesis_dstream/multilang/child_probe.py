"""Which multilang protocol a child speaks: declared, else asked of its own amazon_kclpy.

:func:`choose_protocol_version` takes ``multiLangProtocol`` if the file declares it, else
:func:`probe_child`'s answer, else KCL 2.x's (what this daemon sent before it knew 1.x).

The child is ``executableName`` (split as the Java daemon splits it). Its interpreter is
the command's first word when that is a Python (``python3 app.py``, ``/venv/bin/python
-u app.py``), else the ``#!`` line of the command's file when that runs a Python
(``app.py`` with ``#!/usr/bin/env python``, found on the child's ``PATH``, as the kernel
runs it). That interpreter, with the child's environment and working directory, imports
``amazon_kclpy`` as the child would (the script's directory first on ``sys.path``) and
says which actions its ``dispatch`` decodes (every kclpy from 1.3 on keeps them in
``dispatch._serializers``), else its installed version, else only that it has one (kclpy
before 1.3: all KCL 1.x). The probe is 2.x/3.x-compatible Python: KCL 1.x apps ran on
Python 2.7 too.

A child that is not a Python (a shell wrapper, a Node or Ruby client), or whose Python has
no amazon_kclpy, gives no answer: the daemon then uses the declared or default version.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import Optional

from .child import split_command
from .properties import MultiLangConfig
from .protocol_version import PROPERTY, ProtocolVersion, from_actions, from_kclpy_version

log = logging.getLogger(__name__)

#: How long the child's interpreter may take to answer (an import on a loaded machine).
PROBE_TIMEOUT_S = 30.0

_PYTHON = re.compile(r"(?:python|pypy)[0-9.]*(?:\.exe)?", re.IGNORECASE)
_PYTHON_IN_SHEBANG = re.compile(r"(?:^|[/\s])(?:python|pypy)[0-9.]*(?:\s|$)", re.IGNORECASE)
#: Python's options that take the next word as their value.
_OPTIONS_WITH_VALUE = frozenset({"-W", "-X", "-Q"})

PROBE = r"""
import json, sys
if sys.argv[1] and sys.path and sys.path[0] == "":
    sys.path[0] = sys.argv[1]  # where a script finds its imports first (not under -P/-I)
out = {}
try:
    import amazon_kclpy
    out["kclpy"] = getattr(amazon_kclpy, "__file__", None) or "?"
except Exception as exc:
    out["error"] = "%s: %s" % (type(exc).__name__, exc)
if "kclpy" in out:
    try:
        from amazon_kclpy import dispatch
        out["actions"] = sorted(dispatch._serializers)
    except Exception:
        pass
    try:
        from importlib.metadata import version
        out["version"] = version("amazon_kclpy")
    except Exception:
        try:
            import pkg_resources
            out["version"] = pkg_resources.get_distribution("amazon_kclpy").version
        except Exception:
            pass
sys.stdout.write("\n" + json.dumps(out) + "\n")
"""


def choose_protocol_version(config: MultiLangConfig, env: Optional[dict]) -> ProtocolVersion:
    """``multiLangProtocol`` if declared, else the child's answer, else KCL 2.x's; logged."""
    command = config.executable_name
    if config.multi_lang_protocol is not None:
        version = config.multi_lang_protocol
        log.info("children of %r speak %s (%s)", command, version.value, PROPERTY)
        return version
    answer = probe_child(command, env)
    if answer.version is not None:
        log.info("children of %r speak %s: %s", command, answer.version.value, answer.why)
        return answer.version
    log.info(
        "children of %r get KCL 2.x's messages: %s; for an amazon-kclpy 1.x child, set %s "
        "= KCL_1X (kclpy 1.0-1.4) or KCL_1X_GRACEFUL (kclpy 1.5)",
        command,
        answer.why,
        PROPERTY,
    )
    return ProtocolVersion.KCL_2X


@dataclass(frozen=True)
class ProbeAnswer:
    """What the child's interpreter said: its version, or why there is none."""

    version: Optional[ProtocolVersion]
    why: str


def probe_child(command: str, env: Optional[dict] = None, cwd: Optional[str] = None) -> ProbeAnswer:
    """Ask ``command``'s interpreter which protocol its amazon_kclpy speaks."""
    env = dict(os.environ if env is None else env)
    cwd = cwd or os.getcwd()
    found = python_of(split_command(command), env, cwd)
    if found is None:
        return ProbeAnswer(None, f"{command!r} is not run by a Python this daemon can find")
    interpreter, script_dir = found
    argv = [*interpreter, "-c", PROBE, script_dir]
    try:
        done = subprocess.run(
            argv, env=env, cwd=cwd, capture_output=True, timeout=PROBE_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return ProbeAnswer(None, f"{' '.join(interpreter)} could not be asked: {exc}")
    lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
    try:
        said = json.loads(lines[-1]) if lines else None
    except ValueError:
        said = None
    if not isinstance(said, dict):
        tail = done.stderr.decode("utf-8", "replace").strip()[-300:]
        return ProbeAnswer(
            None, f"{' '.join(interpreter)} did not answer (exit {done.returncode}): {tail}"
        )
    return _judge(said, " ".join(interpreter))


def _judge(said: dict, interpreter: str) -> ProbeAnswer:
    if "kclpy" not in said:
        return ProbeAnswer(None, f"{interpreter} has no amazon_kclpy ({said.get('error')})")
    where = f"{interpreter}'s amazon_kclpy ({said['kclpy']}"
    where += f", {said['version']})" if said.get("version") else ")"
    actions = said.get("actions")
    if isinstance(actions, list):
        return ProbeAnswer(
            from_actions(actions), f"{where} decodes {', '.join(str(a) for a in actions)}"
        )
    version = from_kclpy_version(str(said.get("version") or ""))
    if version is not None:
        return ProbeAnswer(version, f"{where} is that version")
    # amazon_kclpy without dispatch._serializers and no version: one before 1.3, all 1.x.
    return ProbeAnswer(ProtocolVersion.KCL_1X, f"{where} has no dispatch table: kclpy < 1.3")


def python_of(argv: list, env: dict, cwd: str) -> Optional[tuple]:
    """(the interpreter's argv, the ``sys.path[0]`` the child's code sees) for the child
    ``argv``, or None where it is not run by a Python found here."""
    if not argv:
        return None
    first = argv[0]
    if _PYTHON.fullmatch(os.path.basename(first)):
        return _python_command(argv, cwd)
    path = _resolve(first, env, cwd)
    if path is None:
        return None
    interpreter = _shebang(path)
    if interpreter is None or not _PYTHON_IN_SHEBANG.search(" ".join(interpreter)):
        return None
    return interpreter, os.path.dirname(path)


def _python_command(argv: list, cwd: str) -> Optional[tuple]:
    """``python [options] script|-m module|-c code ...`` as the interpreter and its path."""
    interpreter = [argv[0]]
    words = argv[1:]
    i = 0
    while i < len(words) and words[i].startswith("-") and words[i] != "-":
        option = words[i]
        if option in ("-m", "-c") or option.startswith(("-m", "-c")):
            return interpreter, ""  # a module or code: sys.path[0] is the working directory
        interpreter.append(option)
        if option in _OPTIONS_WITH_VALUE and i + 1 < len(words):
            interpreter.append(words[i + 1])
            i += 1
        i += 1
    if i >= len(words):
        return None
    script = os.path.join(cwd, words[i])
    return interpreter, os.path.dirname(os.path.abspath(script))


def _resolve(name: str, env: dict, cwd: str) -> Optional[str]:
    """The file the command's first word runs: as given with a slash (from ``cwd``), else
    found on the child's ``PATH``, as ``execvp`` finds it."""
    if "/" in name:
        path = os.path.join(cwd, name)
        return path if os.path.isfile(path) else None
    return shutil.which(name, path=env.get("PATH", os.defpath))


def _shebang(path: str) -> Optional[list]:
    """The ``#!`` line as the kernel runs it: the interpreter and at most one argument
    (everything after the interpreter's name, as one word)."""
    try:
        with open(path, "rb") as file:
            first = file.readline(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    line = first[2:].decode("utf-8", "replace").strip()
    if not line:
        return None
    words = line.split(None, 1)
    return [words[0], words[1].strip()] if len(words) > 1 else words
