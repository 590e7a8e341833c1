"""One child process per held shard: started, piped, drained, stopped.

The command is ``executableName`` split at runs of spaces (no quoting, exactly as the
Java ``MultiLangRecordProcessorFactory`` splits it), found on ``PATH`` when it has no
slash, and run in the daemon's working directory with the daemon's environment, as the
Java daemon's ``ProcessBuilder`` does. Its stdout feeds a
:class:`~.messages.MessageReader`; its stderr lines go to the log with the shard id.
:meth:`ChildProcess.stop` mirrors the Java ``childProcessShutdownSequence``: close the
child's stdin (kclpy's loop ends at EOF), drain its output, wait for it; and, since
every wait here has a bound, terminate and then kill a child that does not exit within
``grace_s``.
"""

from __future__ import annotations

import logging
import re
import subprocess
import threading
import time
from typing import Any, Optional

from .messages import MessageReader, MessageWriter

log = logging.getLogger(__name__)
child_log = logging.getLogger("kinesis_dstream.multilang.child.stderr")


class ChildProcess:
    """The child of one shard. Not thread-safe: its shard consumer owns it."""

    def __init__(self, command: str, shard_id: str, env: Optional[dict] = None) -> None:
        self.argv = split_command(command)
        if not self.argv:
            raise ValueError("executableName is empty")
        self.shard_id = shard_id
        self._env = env
        self._process: Optional[subprocess.Popen] = None
        self._stderr_thread: Optional[threading.Thread] = None
        self.writer: Optional[MessageWriter] = None
        self.reader: Optional[MessageReader] = None

    @property
    def pid(self) -> Optional[int]:
        return None if self._process is None else self._process.pid

    def start(self) -> ChildProcess:
        try:
            process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self._env,
                bufsize=0,
            )
        except OSError as exc:
            raise OSError(
                f"cannot start the child of shard {self.shard_id}: {self.argv!r}: {exc}"
            ) from exc
        self._process = process
        assert process.stdin and process.stdout and process.stderr
        self.writer = MessageWriter(process.stdin, self.shard_id)
        self.reader = MessageReader(process.stdout, self.shard_id).start()
        self._stderr_thread = threading.Thread(
            target=self._drain_stderr,
            args=(process.stderr,),
            name=f"multilang-stderr-{self.shard_id}",
            daemon=True,
        )
        self._stderr_thread.start()
        log.info("started child %d for shard %s: %s", process.pid, self.shard_id, self.argv)
        return self

    def _drain_stderr(self, stream: Any) -> None:
        try:
            for raw in stream:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if line:
                    child_log.warning("[shard %s] %s", self.shard_id, line)
        except (OSError, ValueError):
            pass

    def send(self, message: dict) -> None:
        assert self.writer is not None
        self.writer.write(message)

    def receive(self, timeout_s: float) -> Any:
        assert self.reader is not None
        return self.reader.next(timeout_s)

    def exit_code(self) -> Optional[int]:
        return None if self._process is None else self._process.poll()

    def stop(self, grace_s: float = 5.0) -> Optional[int]:
        """Close stdin, wait up to ``grace_s``, then terminate, then kill; join readers."""
        process = self._process
        if process is None:
            return None
        if self.writer is not None:
            self.writer.close()
        deadline = time.monotonic() + grace_s
        code = _wait(process, grace_s)
        if code is None:
            log.warning(
                "child %d of shard %s did not exit %.1fs after its stdin closed: terminating it",
                process.pid,
                self.shard_id,
                grace_s,
            )
            process.terminate()
            code = _wait(process, 2.0)
        if code is None:
            log.error(
                "child %d of shard %s ignored SIGTERM: killing it", process.pid, self.shard_id
            )
            process.kill()
            code = _wait(process, 5.0)
        left = max(0.5, deadline - time.monotonic())
        if self.reader is not None and not self.reader.join(left):
            log.error("stdout reader of shard %s did not end", self.shard_id)
        if self._stderr_thread is not None:
            self._stderr_thread.join(left)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        log.info("child %d of shard %s exited with %s", process.pid, self.shard_id, code)
        return code

    def kill(self) -> None:
        """Kill at once (the daemon is halting); then reap within a bound."""
        process = self._process
        if process is None or process.poll() is not None:
            return
        process.kill()
        _wait(process, 5.0)


def split_command(command: str) -> list:
    """``executableName`` as the Java daemon splits it: at runs of spaces, no quoting."""
    return [part for part in re.split(" +", command.strip(" ")) if part]


def _wait(process: subprocess.Popen, timeout_s: float) -> Optional[int]:
    try:
        return process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None
