"""A job for `kinesis-dstream glue run` whose stop never ends, as one whose batch is stuck
in a call to a dead endpoint: it starts a helper process in a process group of its own
(as Spark's Python daemon puts its workers), prints both pids, and takes Ctrl-C and
SIGTERM as forEachBatch does (the first asks for a graceful stop, which here never
finishes). With --ignore it ignores both signals instead. No Spark."""

import os
import signal
import subprocess
import sys
import time

from kinesis_dstream.stop_signals import stop_signals

# preexec_fn, not process_group= (Python 3.11+): the library supports Python 3.9
helper = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(300)"], preexec_fn=os.setpgrp
)
print("PIDS", os.getpid(), helper.pid, flush=True)
if "--ignore" in sys.argv:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("READY", flush=True)
    time.sleep(300)
with stop_signals(force_on_second=True) as stop:
    print("READY", flush=True)
    stop.wait(300)
    print("STOPPING", flush=True)
    time.sleep(300)  # the stop that never ends
