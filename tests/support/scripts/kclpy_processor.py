"""A test record processor on the sdist's amazon_kclpy (v3 interface).

Every event is appended as one JSON line to ``$KCLPY_OUT_DIR/<shard>.<pid>.jsonl`` with
the wall time, so a test can check what each child was given and in which order.
``$KCLPY_MODE`` picks the behaviour:

- ``every``: checkpoint at every record (every sub-record of a KPL aggregate);
- ``batch``: checkpoint at the end of every batch (as the kclpy sample can be set to);
- ``raise``: raise from process_records on the first batch (without checkpointing),
  then checkpoint every later batch at its end;
- ``exit``: exit with status 3 in the middle of the first batch;
- ``bogus``: ask to checkpoint a position never given, then at the batch's last record;
- ``hang``: never answer the first batch (sleep; the daemon kills the child);
- ``end_twice``: checkpoint every record, but answer the first ``shardEnded`` of each
  shard without checkpointing (a marker file remembers it across children);
- ``gated``: before checkpointing its first batch, wait (at most 60 s) for the file
  ``$KCLPY_OUT_DIR/go`` (the test takes the lease away meanwhile);
- ``slow_init``: take ``$KCLPY_INIT_S`` seconds (default 1) to initialize: ``initialize``
  is noted with the process's start time (``started``), ``initialized`` when it answers;
  then checkpoint at every record.

Each checkpoint is noted as ``checkpointing`` before the call and ``checkpoint`` (or
``checkpoint_error``, with kclpy's ``CheckpointError`` value: recorded, not retried) after.
"""

import json
import os
import sys
import time

from amazon_kclpy import kcl
from amazon_kclpy.v3 import processor

#: When this child process started (for ``slow_init``: how many children start at once).
STARTED = time.time()
MODE = os.environ.get("KCLPY_MODE", "every")
OUT_DIR = os.environ["KCLPY_OUT_DIR"]
#: Which daemon ran this child (a test's label; the daemon passes its environment on).
TAG = os.environ.get("KCLPY_TAG", "")


class Processor(processor.RecordProcessorBase):
    def __init__(self):
        self.shard = None
        self.path = None
        self.batches = 0

    def note(self, **event):
        event["t"] = time.time()
        event["tag"] = TAG
        with open(self.path, "a") as out:  # one line per event, complete when written
            out.write(json.dumps(event) + "\n")

    def checkpoint(self, checkpointer, seq=None, sub=None):
        # Noted before the call too: the write can land and the child be killed (its daemon
        # stopped) before it notes the outcome; a test then still knows it was asked for.
        self.note(event="checkpointing", seq=seq, sub=sub)
        try:
            checkpointer.checkpoint(seq, sub)
            self.note(event="checkpoint", seq=seq, sub=sub)
        except kcl.CheckpointError as e:
            self.note(event="checkpoint_error", seq=seq, sub=sub, error=e.value)

    def initialize(self, initialize_input):
        self.shard = initialize_input.shard_id
        self.path = os.path.join(OUT_DIR, f"{self.shard}.{os.getpid()}.jsonl")
        self.note(
            event="initialize",
            seq=initialize_input.sequence_number,
            sub=initialize_input.sub_sequence_number,
            started=STARTED,
        )
        if MODE == "slow_init":
            time.sleep(float(os.environ.get("KCLPY_INIT_S", "1")))
            self.note(event="initialized")

    def process_records(self, process_records_input):
        self.batches += 1
        records = process_records_input.records
        for i, record in enumerate(records):
            self.note(
                event="record",
                seq=record.sequence_number,
                sub=record.sub_sequence_number,
                pk=record.partition_key,
                data=record.data,
                arrival=record.timestamp_millis,
            )
            if MODE in ("every", "end_twice", "slow_init"):
                self.checkpoint(
                    process_records_input.checkpointer,
                    record.sequence_number,
                    record.sub_sequence_number,
                )
            if MODE == "exit" and i == len(records) // 2:
                sys.stderr.write(f"exiting on purpose in shard {self.shard}\n")
                sys.stderr.flush()
                os._exit(3)
        if MODE == "hang":
            time.sleep(600)
        if MODE == "raise" and self.batches == 1:
            raise RuntimeError(f"failing on purpose in shard {self.shard}")
        last = records[-1]
        if MODE == "bogus":
            self.checkpoint(
                process_records_input.checkpointer, str(int(last.sequence_number) + 10**6), 0
            )
        if MODE == "gated" and self.batches == 1:
            gate = os.path.join(OUT_DIR, "go")
            deadline = time.time() + 60
            while not os.path.exists(gate) and time.time() < deadline:
                time.sleep(0.05)
        if MODE in ("raise", "bogus", "gated", "batch"):
            self.checkpoint(
                process_records_input.checkpointer, last.sequence_number, last.sub_sequence_number
            )

    def lease_lost(self, lease_lost_input):
        self.note(event="lease_lost")

    def shard_ended(self, shard_ended_input):
        self.note(event="shard_ended")
        marker = os.path.join(OUT_DIR, f"{self.shard}.ended-once")
        if MODE == "end_twice" and not os.path.exists(marker):
            open(marker, "w").close()
            return
        self.checkpoint(shard_ended_input.checkpointer)

    def shutdown_requested(self, shutdown_requested_input):
        self.note(event="shutdown_requested")
        self.checkpoint(shutdown_requested_input.checkpointer)


if __name__ == "__main__":
    kcl.KCLProcess(Processor()).run()
