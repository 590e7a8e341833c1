"""The tests' one way to put user records on a stream: the library's own producer."""

from __future__ import annotations

from typing import Callable, Union

from kinesis_dstream import KinesisProducer

Template = Union[str, Callable[[int], str]]


def _render(template: Template, i: int) -> str:
    return template(i) if callable(template) else template.format(i=i)


def put_records(
    kinesis,
    stream: str,
    n: int,
    *,
    data: Template = "r{i}",
    key: Template = "k{i}",
    start: int = 0,
    aggregate: bool = False,
) -> dict:
    """Put records ``start`` .. ``start + n - 1`` through :class:`KinesisProducer` (batched,
    retried, raising on a record it could not put; KPL aggregates with ``aggregate``).

    Record ``i`` has data ``data.format(i=i)`` and partition key ``key.format(i=i)`` (either
    may be a function of ``i`` instead). Returns {data: partition key} in the order sent.
    """
    sent = {}
    with KinesisProducer(stream, client=kinesis, aggregate=aggregate) as producer:
        for i in range(start, start + n):
            value, partition_key = _render(data, i), _render(key, i)
            producer.put(value, partition_key)
            sent[value] = partition_key
    return sent
