"""CSV files as Glue's CSV reader reads them: fields, names and each column's type.

Parsing is pyarrow's (its C++ reader, streamed a block at a time) with Glue's format
options: ``separator``, ``quoteChar`` (or no quoting), ``escaper``, ``multiLine``;
quoted fields follow RFC 4180 (a doubled quote is a quote). Every field is read as text
first. ``withHeader`` names the columns from the first row (an empty or repeated name
gets its position: ``col3``), else they are ``col0``, ``col1``... as Glue names them;
``skipFirst`` drops the first data row. An unquoted empty field is null; a quoted one is
an empty string.

A row with fewer fields than the first row gets nulls for the missing ones; one with
more loses the extra fields, counted and logged once a file (Glue keeps such rows; its
error records have no counterpart in a DataFrame).

Types, as Glue types CSV values (numbers become numbers; Glue's per-record choice of
long or string has one type here): a column whose every value is an integer of 64 bits
is ``long``; else one whose every value is a decimal number is ``double``; else
``string``. :func:`column_kind` judges one column's values and :func:`merge_kinds` the
judgements of the files and blocks of a read; :func:`convert` applies the verdict.
"""

from __future__ import annotations

import csv
import io
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Optional

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.compute as pc  # type: ignore[import-untyped]
from pyarrow import csv as pcsv

from .s3_options import CsvFormat

log = logging.getLogger(__name__)

#: Column kinds, narrowest first: a read's kind of a column is the widest seen.
KINDS = ("null", "long", "double", "string")
LONG_PATTERN = r"^[+-]?[0-9]+$"
DOUBLE_PATTERN = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
#: Columns read as text without naming them first (pyarrow names columns f0, f1...).
MAX_TEXT_COLUMNS = 4096
_TEXT_TYPES = {f"f{i}": pa.string() for i in range(MAX_TEXT_COLUMNS)}
BLOCK_BYTES = 1 << 20


def column_kind(values: Any) -> str:
    """The narrowest kind holding every non-null value of a string array."""
    present = values.drop_null()
    if len(present) == 0:
        return "null"
    if pc.all(pc.match_substring_regex(present, LONG_PATTERN)).as_py():
        try:
            pc.cast(pc.replace_substring_regex(present, r"^\+", ""), pa.int64())
            return "long"
        except (pa.ArrowInvalid, OverflowError):
            return "double"  # integers past 64 bits
    if pc.all(pc.match_substring_regex(present, DOUBLE_PATTERN)).as_py():
        return "double"
    return "string"


def merge_kinds(a: str, b: str) -> str:
    return max(a, b, key=KINDS.index)


def spark_type_name(kind: str) -> str:
    return {"long": "bigint", "double": "double"}.get(kind, "string")


def convert(values: Any, kind: str) -> tuple:
    """``(array of the kind's type, values that did not fit)``: a value that no longer
    fits its column (the file changed between the read's two passes) is null."""
    if kind in ("null", "string"):
        return values, 0
    target = pa.int64() if kind == "long" else pa.float64()
    pattern = LONG_PATTERN if kind == "long" else DOUBLE_PATTERN
    text = pc.replace_substring_regex(values, r"^\+", "") if kind == "long" else values
    try:
        return pc.cast(text, target), 0
    except (pa.ArrowInvalid, OverflowError):
        fits = pc.fill_null(pc.match_substring_regex(values, pattern), False)
        kept = pc.if_else(fits, text, pa.scalar(None, pa.string()))
        misfits = len(values) - values.null_count - pc.sum(fits).as_py()
        try:
            return pc.cast(kept, target), misfits
        except (pa.ArrowInvalid, OverflowError):
            out = []
            for v in kept.to_pylist():
                try:
                    out.append(None if v is None else (int(v) if kind == "long" else float(v)))
                except (ValueError, OverflowError):
                    out.append(None)
                    misfits += 1
            return pa.array(out, target), misfits


def column_names(header: Optional[list], width: int) -> list:
    """Glue's names: the header's (an empty or repeated one by position), else col<i>."""
    names: list = []
    for i in range(width):
        name = header[i] if header is not None and i < len(header) else None
        if not name or name in names:
            name = f"col{i}"
        names.append(name)
    return names


@dataclass
class CsvFile:
    """One CSV file's rows as text batches; ``names`` once the first batch is read."""

    stream: Any
    fmt: CsvFormat
    names: Optional[list] = None
    #: Rows whose fields were cut to the first row's count.
    long_rows: int = 0
    _odd_rows: list = field(default_factory=list)

    def _options(self) -> tuple:
        fmt = self.fmt
        parse = pcsv.ParseOptions(
            delimiter=fmt.separator,
            quote_char=fmt.quote if fmt.quote is not None else False,
            double_quote=True,
            escape_char=fmt.escape if fmt.escape is not None else False,
            newlines_in_values=fmt.multi_line,
            invalid_row_handler=self._odd_row,
        )
        convert_options = pcsv.ConvertOptions(
            column_types=_TEXT_TYPES,
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
            null_values=[""],
        )
        read = pcsv.ReadOptions(autogenerate_column_names=True, block_size=BLOCK_BYTES)
        return read, parse, convert_options

    def _odd_row(self, row: Any) -> str:
        self._odd_rows.append(row.text)
        return "skip"

    def batches(self) -> Iterator[Any]:
        """Record batches of text columns named :attr:`names` (header and ``skipFirst``
        rows taken out)."""
        read, parse, convert_options = self._options()
        try:
            reader = pcsv.open_csv(
                self.stream, read_options=read, parse_options=parse, convert_options=convert_options
            )
        except pa.ArrowInvalid as exc:
            if "Empty CSV file" not in str(exc):
                raise
            self.names = []  # an empty file: no rows, no columns, nothing wrong
            return
        width = len(reader.schema)
        to_skip = (1 if self.fmt.with_header else 0) + (1 if self.fmt.skip_first else 0)
        for batch in reader:
            if self.names is None:
                header = batch.slice(0, 1).to_pylist()[0] if self.fmt.with_header else None
                row = list(header.values()) if header else None
                self.names = column_names(row, width)
            if to_skip:
                taken = min(to_skip, batch.num_rows)
                batch, to_skip = batch.slice(taken), to_skip - taken
            if batch.num_rows:
                yield _named(batch, self.names)
            if self._odd_rows:
                yield self._odd_batch(width)
        if self.names is None:  # an empty file
            self.names = []

    def _odd_batch(self, width: int) -> Any:
        """The rows of another field count, fields re-read, padded or cut to ``width``."""
        rows = []
        for text in self._odd_rows:
            fields = _fields(text, self.fmt)
            if len(fields) > width:
                self.long_rows += 1
            rows.append(
                [(v if v != "" else None) for v in fields[:width]] + [None] * (width - len(fields))
            )
        self._odd_rows.clear()
        columns = [pa.array([r[i] for r in rows], pa.string()) for i in range(width)]
        return pa.RecordBatch.from_arrays(columns, names=self.names)


def _named(batch: Any, names: list) -> Any:
    return pa.RecordBatch.from_arrays(
        [batch.column(i).cast(pa.string()) for i in range(len(names))], names=names
    )


def _fields(text: str, fmt: CsvFormat) -> list:
    kwargs: dict = {"delimiter": fmt.separator, "doublequote": True}
    if fmt.quote is None:
        kwargs["quoting"] = csv.QUOTE_NONE
    else:
        kwargs["quotechar"] = fmt.quote
    if fmt.escape is not None:
        kwargs["escapechar"] = fmt.escape
    try:
        return next(csv.reader(io.StringIO(text), **kwargs), [])
    except csv.Error:
        return [text]
