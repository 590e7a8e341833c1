"""The amazon-kclpy application bench_kcl_daemon runs under both daemons (a child process).

As the kclpy sample does its work: each record is written to a file
(``$DRAIN_OUT_DIR/<shard>.<pid>.txt``: the wall time it was handled, sequence number,
sub-sequence number, partition key) and the batch is checkpointed at its last record after every
``process_records``. Needs ``amazon_kclpy`` (the sdist's package) on PYTHONPATH.
"""

import os
import time

from amazon_kclpy import kcl
from amazon_kclpy.v3 import processor

OUT_DIR = os.environ["DRAIN_OUT_DIR"]


class DrainProcessor(processor.RecordProcessorBase):
    def __init__(self):
        self.out = None

    def initialize(self, initialize_input):
        path = os.path.join(OUT_DIR, f"{initialize_input.shard_id}.{os.getpid()}.txt")
        self.out = open(path, "a")  # noqa: SIM115 - the child's lifetime

    def process_records(self, process_records_input):
        records = process_records_input.records
        write = self.out.write
        clock = time.time
        for r in records:  # each record's line carries the time it was handled
            write(f"{clock():.6f} {r.sequence_number} {r.sub_sequence_number} {r.partition_key}\n")
        self.out.flush()
        last = records[-1]
        try:
            process_records_input.checkpointer.checkpoint(
                last.sequence_number, last.sub_sequence_number
            )
        except kcl.CheckpointError as exc:
            self.out.write(f"{time.time():.6f} checkpoint-error {exc.value}\n")
            self.out.flush()

    def lease_lost(self, lease_lost_input):
        pass

    def shard_ended(self, shard_ended_input):
        shard_ended_input.checkpointer.checkpoint()

    def shutdown_requested(self, shutdown_requested_input):
        shutdown_requested_input.checkpointer.checkpoint()


if __name__ == "__main__":
    kcl.KCLProcess(DrainProcessor()).run()
