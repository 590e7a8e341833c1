"""A test record processor on amazon-kclpy 1.x's first interface, as the KCL 1.x era's
apps were written: ``kcl.RecordProcessorBase`` with ``initialize(shard_id)``,
``process_records(records, checkpointer)`` (records read as dicts) and
``shutdown(checkpointer, reason)``. Python 2.7-compatible, as those apps were.

Every event is appended as one JSON line to ``$KCLPY_OUT_DIR/<shard>.<pid>.jsonl`` (the
layout of ``kclpy_processor.py``'s, which the interop tests' ``events`` reads). It
checkpoints with no arguments at the end of every batch and at ``shutdown`` TERMINATE
(the shard's end), never at ZOMBIE; each checkpoint is noted as ``checkpoint`` or
``checkpoint_error`` (kclpy's ``CheckpointError`` value).
"""

import json
import os
import time

from amazon_kclpy import kcl

OUT_DIR = os.environ["KCLPY_OUT_DIR"]


class Processor(kcl.RecordProcessorBase):
    def __init__(self):
        self.path = None

    def note(self, **event):
        event["t"] = time.time()
        with open(self.path, "a") as out:
            out.write(json.dumps(event) + "\n")

    def checkpoint(self, checkpointer):
        try:
            checkpointer.checkpoint()
            self.note(event="checkpoint")
        except kcl.CheckpointError as e:
            self.note(event="checkpoint_error", error=e.value)

    def initialize(self, shard_id):
        name = "{}.{}.jsonl".format(shard_id, os.getpid())  # noqa: UP032 (Python 2.7 too)
        self.path = os.path.join(OUT_DIR, name)
        self.note(event="initialize")

    def process_records(self, records, checkpointer):
        for record in records:
            self.note(
                event="record",
                seq=record["sequenceNumber"],
                sub=record["subSequenceNumber"],
                pk=record["partitionKey"],
                data=record["data"],
                arrival=record["approximateArrivalTimestamp"],
            )
        self.checkpoint(checkpointer)

    def shutdown(self, checkpointer, reason):
        self.note(event="shutdown", reason=reason)
        if reason == "TERMINATE":
            self.checkpoint(checkpointer)


if __name__ == "__main__":
    kcl.KCLProcess(Processor()).run()
