"""The executor-side file writer on a local directory (no Spark: a task attempt is
called as Spark calls it): each attempt of a task writes and removes only its own files,
and a failed attempt leaves none of them."""

import json

import pyarrow as pa
import pytest

from kinesis_dstream.glue.errors import GlueError
from kinesis_dstream.glue.sinks.file_formats import LINE_COLUMN
from kinesis_dstream.glue.sinks.file_sink import FileSetWriter


def writer(path, fmt="json", keys=(), compression="none"):
    return FileSetWriter(
        {
            "path": str(path),
            "format": fmt,
            "partition_keys": json.dumps(list(keys)),
            "start_millis": "1",
            "token": "abcd1234",
            "file_options": json.dumps({"compression": compression}),
        }
    )


def lines(*rows, key=None):
    columns = {} if key is None else {"__key_0": [key] * len(rows)}
    return pa.RecordBatch.from_pydict({**columns, LINE_COLUMN: [json.dumps(r) for r in rows]})


def failing_after(*batches):
    yield from batches
    raise ConnectionError("the executor lost its input")


def files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_a_failing_attempt_of_a_task_leaves_the_file_another_attempt_wrote(tmp_path):
    """A speculative or zombie attempt failing after a successful one of the same task
    used to delete the successful attempt's file (they shared one name)."""
    done = writer(tmp_path).write_attempt(iter([lines({"id": 1}, {"id": 2})]), 7, 0)
    assert done.files == [(str(tmp_path / "run-1-abcd1234-part-r-00007-a0.json"), 2)]
    with pytest.raises(ConnectionError):
        writer(tmp_path).write_attempt(failing_after(lines({"id": 3})), 7, 1)
    assert files(tmp_path) == ["run-1-abcd1234-part-r-00007-a0.json"]
    assert (tmp_path / files(tmp_path)[0]).read_text().splitlines() == ['{"id": 1}', '{"id": 2}']


def test_a_failed_attempt_leaves_none_of_its_partition_files(tmp_path):
    batches = [lines({"id": 1}, key="a"), lines({"id": 2}, key="b")]
    with pytest.raises(ConnectionError):
        writer(tmp_path, keys=["k"], compression="gzip").write_attempt(
            failing_after(*batches), 0, 0
        )
    assert files(tmp_path) == []


def test_a_file_whose_format_cannot_open_leaves_no_empty_file(tmp_path):
    bad = pa.RecordBatch.from_pydict({"not an avro name": [1]})
    with pytest.raises(GlueError, match="is not an Avro name"):
        writer(tmp_path, fmt="avro").write_attempt(iter([bad]), 0, 0)
    assert files(tmp_path) == []


def test_parquet_and_avro_files_stream_into_their_attempt_s_file(tmp_path):
    import fastavro
    import pyarrow.parquet as pq

    rows = pa.RecordBatch.from_pydict({"id": [1, 2], "name": ["a", None]})
    paths = {}
    for fmt in ("parquet", "avro"):
        done = writer(tmp_path / fmt, fmt=fmt).write_attempt(iter([rows, rows]), 2, 1)
        ((paths[fmt], records),) = done.files
        assert paths[fmt].endswith(f"part-r-00002-a1.{fmt}") and records == 4
    assert pq.read_table(paths["parquet"]).column("id").to_pylist() == [1, 2, 1, 2]
    with open(paths["avro"], "rb") as avro:
        assert [r["name"] for r in fastavro.reader(avro)] == ["a", None, "a", None]
