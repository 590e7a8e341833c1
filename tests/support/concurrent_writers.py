"""Writers that hit one server at the same moment, from threads here and spawned processes.

:func:`run_writers` starts ``threads + processes`` copies of a writer; each builds its own
client, waits at one barrier shared by all (so a slow process start costs no overlap), and
returns what the server acknowledged. The writers are module functions so that a spawned
process can import them; each gets its index, the server's port and the barrier.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from threading import BrokenBarrierError
from typing import Any, Callable

from botocore.exceptions import ClientError

from kinesis_dstream.leases.dynamodb import LeaseTable
from kinesis_dstream.local import LocalEndpoint

#: Bound on one writer's whole run, and on each barrier wait (a writer that died must
#: fail the test, not hang it).
WRITER_TIMEOUT_S = 120.0


def endpoint(port: int) -> LocalEndpoint:
    """The local AWS on ``port`` (a picklable port, not the server's handle)."""
    local = LocalEndpoint()
    local.port = port
    return local


@contextlib.contextmanager
def breaking_on_error(barrier: Any) -> Iterator[None]:
    """A writer that fails breaks the barrier: the others fail at once, not at its bound."""
    try:
        yield
    except BaseException:
        barrier.abort()
        raise


def run_writers(writer: Callable[..., Any], threads: int, processes: int, *args: Any) -> list:
    """Run ``writer(index, barrier, *args)`` in ``threads`` threads and ``processes``
    spawned processes at once; their results, by index. A writer's error is raised, the
    one that broke the barrier rather than the others' broken waits."""
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        barrier = manager.Barrier(threads + processes)
        with ThreadPoolExecutor(threads) as here, ProcessPoolExecutor(
            processes, mp_context=context
        ) as apart:
            futures = [here.submit(writer, i, barrier, *args) for i in range(threads)]
            futures += [
                apart.submit(writer, threads + i, barrier, *args) for i in range(processes)
            ]
            raised = (future.exception(timeout=WRITER_TIMEOUT_S) for future in futures)
            errors = [error for error in raised if error is not None]
            if errors:
                broke = (e for e in errors if not isinstance(e, BrokenBarrierError))
                raise next(broke, errors[0])
            return [future.result() for future in futures]


def put_records_writer(index: int, barrier: Any, port: int, stream: str, calls: int, batch: int):
    """``calls`` PutRecords of ``batch`` records each: [(sequence number, data)] acknowledged."""
    kinesis = endpoint(port).client("kinesis")
    barrier.wait(WRITER_TIMEOUT_S)
    acknowledged = []
    for call in range(calls):
        data = [f"w{index}-c{call}-r{n}".encode() for n in range(batch)]
        answer = kinesis.put_records(
            StreamName=stream, Records=[{"Data": d, "PartitionKey": "one-key"} for d in data]
        )
        assert answer.get("FailedRecordCount", 0) == 0, answer
        acknowledged += [(r["SequenceNumber"], d) for r, d in zip(answer["Records"], data)]
    return acknowledged


def put_record_writer(index: int, barrier: Any, port: int, stream: str, calls: int):
    """``calls`` PutRecord calls: [(sequence number, data)] acknowledged."""
    kinesis = endpoint(port).client("kinesis")
    barrier.wait(WRITER_TIMEOUT_S)
    acknowledged = []
    for call in range(calls):
        data = f"w{index}-c{call}".encode()
        answer = kinesis.put_record(StreamName=stream, Data=data, PartitionKey="one-key")
        acknowledged.append((answer["SequenceNumber"], data))
    return acknowledged


def lease_taker(index: int, barrier: Any, port: int, table_name: str, lease_key: str, rounds: int):
    """Each round: read the lease, wait for every taker, take it (a conditional update of
    ``leaseCounter``). [(counter expected, won)] by round."""
    table = LeaseTable(endpoint(port).client("dynamodb"), table_name)
    tries = []
    with breaking_on_error(barrier):
        for _ in range(rounds):
            barrier.wait(WRITER_TIMEOUT_S)  # every taker has seen the last round's winner
            seen = table.get_lease(lease_key)
            assert seen is not None, f"lease {lease_key} missing from {table_name}"
            barrier.wait(WRITER_TIMEOUT_S)
            tries.append((seen.lease_counter, table.take(seen, f"worker-{index}") is not None))
    return tries


def object_creator(index: int, barrier: Any, port: int, bucket: str, keys: int):
    """For each key, at once with every creator: PutObject with If-None-Match: * (create
    only if absent). The keys this creator created; any answer but PreconditionFailed fails."""
    s3 = endpoint(port).client("s3")
    created = []
    with breaking_on_error(barrier):
        for key in range(keys):
            barrier.wait(WRITER_TIMEOUT_S)
            try:
                body = f"creator {index}".encode()
                s3.put_object(Bucket=bucket, Key=f"k{key}", Body=body, IfNoneMatch="*")
                created.append(key)
            except ClientError as exc:
                if exc.response["Error"]["Code"] != "PreconditionFailed":
                    raise
    return created
