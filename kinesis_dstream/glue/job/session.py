"""The processes of one ``glue run``: the script's process leads a session of its own, and
Spark's JVM and Python workers (the daemon puts its workers in a process group of their
own) are in it too. Ending the session ends them all, so no process outlives the
command, whatever state the script is in.

Members are found by session id in ``/proc`` (Linux); elsewhere the session leader's
process group is signalled instead.
"""

from __future__ import annotations

import logging
import os
import signal
import time

log = logging.getLogger(__name__)

#: After SIGKILL, how long the members may take to be gone.
KILL_WAIT_S = 5.0
_POLL_S = 0.05


def session_members(sid: int) -> list:
    """The living processes (not zombies) of session ``sid``."""
    try:
        names = os.listdir("/proc")
    except OSError:  # no /proc: the leader alone is known
        return [sid] if _alive(sid) else []
    members = []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        # after "pid (comm)": state, ppid, pgrp, session
        if fields[0] not in (b"Z", b"X") and int(fields[3]) == sid:
            members.append(int(name))
    return members


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal(pids: list, sid: int, sig: int) -> None:
    if not os.path.isdir("/proc"):
        try:
            os.killpg(sid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        return
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _others(sid: int) -> list:
    return [p for p in session_members(sid) if p != os.getpid()]


def _wait_gone(sid: int, bound_s: float) -> list:
    """The members but this process still there after up to ``bound_s``."""
    deadline = time.monotonic() + bound_s
    left = _others(sid)
    while left and time.monotonic() < deadline:
        time.sleep(_POLL_S)
        left = _others(sid)
    return left


def end_session(sid: int, grace_s: float) -> int:
    """End every process of session ``sid`` but this one: SIGTERM, ``grace_s`` to exit
    (0: none), then SIGKILL. Returns how many there were."""
    others = _others(sid)
    count = len(others)
    if grace_s > 0 and others:
        _signal(others, sid, signal.SIGTERM)
        others = _wait_gone(sid, grace_s)
    if others:
        _signal(others, sid, signal.SIGKILL)
        left = _wait_gone(sid, KILL_WAIT_S)
        if left:
            log.warning("processes %s of the job did not end on SIGKILL", left)
    return count


def end_own_session() -> None:
    """Kill every process of this process's session, then this one (it leads it)."""
    sid = os.getsid(0)
    if sid == os.getpid():
        end_session(sid, grace_s=0)
    os.kill(os.getpid(), signal.SIGKILL)
