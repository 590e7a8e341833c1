"""What a ``write_dynamic_frame`` to S3 writes: its path, format and options, as Glue
takes them.

Glue's ``DataSink.setFormat`` hands every format option to the JVM writer unchecked,
and its S3 sink takes any connection option: a script passing an option Glue's writer
ignores runs on Glue. So here an option this layer has no use for is accepted and named
once in a warning (:func:`warn_ignored`); only what would change the files is refused, in
one line naming it (a format this layer cannot write, a compression or Avro version it
cannot make, an empty path).

Honoured: ``path``, ``partitionKeys`` and ``compression`` (JSON and CSV ``gzip`` and
``bzip2``; Avro as Glue documents it: ``deflate``, ``snappy``, ``xz`` are Avro codecs,
``gzip`` and ``bzip2`` archives holding the Avro file); CSV's ``separator``,
``quoteChar`` (``-1``: no quoting), ``writeHeader``, ``strictCheckForQuoting``; Parquet's
``compression``; Avro's ``version`` (``1.7`` by default: decimal, date and timestamp as
strings; ``1.8``: logical types) and a ``format_options`` ``compression`` naming an Avro
codec.

CSV is written as AWS's "CSV format" page has it: RFC 4180, a quote inside a quoted
value doubled (``""``). ``escaper`` is a read option there ("used only when reading"):
on a write it is named in a warning and quotes are still doubled; so are the other read
options (``withHeader``, ``multiLine``, ``skipFirst``, ``optimizePerformance``). Values
keep their leading and trailing spaces (Spark's CSV writer trims them unless told not
to).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ..errors import GlueError
from ..options import option_text
from .connection_types import S3_FORMATS, s3_format_refusal
from .file_formats import AVRO_CODECS, LINE_COMPRESSION, PARQUET_COMPRESSION

log = logging.getLogger(__name__)

CONNECTION_KEYS = ("path", "partitionKeys", "compression")
FORMAT_OPTION_KEYS = {
    "json": (),
    "csv": ("separator", "quoteChar", "writeHeader", "strictCheckForQuoting", "escaper"),
    "parquet": ("compression",),
    "avro": ("version", "compression"),
}
#: Glue's Avro writer versions: 1.7 (its default) writes decimal, date and timestamp as
#: strings, 1.8 as Avro logical types.
AVRO_VERSIONS = ("1.7", "1.8")
DEFAULT_AVRO_VERSION = "1.7"
#: CSV ``quoteChar`` values that turn quoting off (AWS documents ``-1``).
NO_QUOTE = ("-1",)
#: CSV options AWS documents for reading only: a write names them in a warning.
CSV_READ_OPTIONS = ("withHeader", "multiLine", "multiline", "skipFirst", "optimizePerformance")

_warned: set = set()
_warned_lock = threading.Lock()


def warn_once(key: Any, message: str) -> None:
    """``message`` as a warning, once a process for ``key`` (a streaming job writes each
    batch: the same option is not named again every batch)."""
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    log.warning("%s", message)


def warn_ignored(where: str, names: Any, why: str = "Glue's writer ignores them") -> None:
    """One warning a process for ``names`` at ``where``, which have no effect."""
    names = tuple(sorted(str(n) for n in names))
    if names:
        warn_once(
            (where, names),
            f"{where} {list(names)} have no effect here ({why}); accepted and ignored",
        )


@dataclass(frozen=True)
class FileTarget:
    """A checked S3 (or local) output: path, format and their options.

    ``compression`` is the file's (JSON, CSV and Avro: ``none``, ``gzip``, ``bzip2``,
    the whole file compressed) or Parquet's codec; ``avro_codec`` the Avro container's
    block codec; ``quote`` None writes CSV without quoting, else a quote inside a quoted
    value is doubled (RFC 4180).
    """

    path: str
    fmt: str
    partition_keys: tuple = ()
    compression: str = "none"
    separator: str = ","
    quote: Optional[str] = '"'
    header: bool = True
    avro_version: str = DEFAULT_AVRO_VERSION
    avro_codec: str = "null"

    @classmethod
    def parse(
        cls, connection_options: Mapping[str, Any], fmt: Any, format_options: Mapping[str, Any]
    ) -> FileTarget:
        refusal = s3_format_refusal(fmt)
        if refusal is not None:
            raise refusal
        name = str(fmt).strip().lower()
        kind = S3_FORMATS[name]
        warn_ignored("s3 connection_options", set(connection_options) - set(CONNECTION_KEYS))
        options = dict(format_options or {})
        read_only = set(CSV_READ_OPTIONS) if kind == "csv" else set()
        warn_ignored(
            f"{name} format_options",
            set(options) - set(FORMAT_OPTION_KEYS[kind]) - read_only,
        )
        warn_ignored(
            "csv format_options",
            read_only & set(options),
            "AWS documents them for reading CSV; a write ignores them",
        )
        path = option_text(connection_options.get("path") or "").strip()
        if not path:
            raise GlueError("write_dynamic_frame to s3: connection_options 'path' is required")
        keys = connection_options.get("partitionKeys") or []
        if isinstance(keys, str):
            keys = [keys]
        given = connection_options.get("compression")
        fields: dict = {}
        if kind == "parquet":
            fields["compression"] = _parquet_compression(options, given)
        elif kind in ("json", "csv"):
            fields["compression"] = _file_compression(given, kind)
            if kind == "csv":
                fields.update(_csv_fields(options))
        else:
            fields.update(_avro_fields(options, given))
        return cls(path=path, fmt=kind, partition_keys=tuple(str(k) for k in keys), **fields)


def _file_compression(given: Any, kind: str) -> str:
    compression = option_text(given or "none").strip().lower()
    if compression not in LINE_COMPRESSION:
        raise GlueError(
            f"{kind} connection_options compression={given!r}: one of {tuple(LINE_COMPRESSION)}"
        )
    return compression


def _parquet_compression(options: dict, given: Any) -> str:
    if given is not None:
        warn_ignored("parquet connection_options", ["compression"], "Parquet's is format_options'")
    compression = option_text(options.get("compression", "snappy")).strip().lower()
    compression = "none" if compression == "uncompressed" else compression
    if compression not in PARQUET_COMPRESSION:
        raise GlueError(
            f"parquet format_options compression={compression!r}: one of {PARQUET_COMPRESSION}"
        )
    return compression


def _csv_fields(options: dict) -> dict:
    """CSV's writing options: one separator and one quote character (or ``-1``) are what
    the files can be made with; anything else would change what is written."""
    separator = option_text(options.get("separator", ","))
    if not separator:
        raise GlueError("csv format_options separator='': give the delimiter character")
    quote_text = option_text(options.get("quoteChar", '"'))
    quote = None if quote_text.strip() in NO_QUOTE else quote_text
    if quote is not None and len(quote) != 1:
        raise GlueError(
            f"csv format_options quoteChar={options.get('quoteChar')!r}: one character, or "
            "-1 for no quoting"
        )
    escaper = option_text(options.get("escaper") or "")
    if escaper and escaper != quote:
        warn_ignored(
            "csv format_options",
            [f"escaper={escaper!r}"],
            "AWS documents escaper for reading only; a quote inside a value is written "
            "doubled, as RFC 4180",
        )
    return {
        "separator": separator,
        "quote": quote,
        "header": option_text(options.get("writeHeader", "true")).lower() != "false",
    }


def _avro_fields(options: dict, given: Any) -> dict:
    """Avro's version and compression: ``connection_options`` ``compression`` as Glue
    documents it (Avro codecs, or gzip/bzip2 archives); a ``format_options`` one applied
    when it names an Avro codec, else ignored with a warning, as Glue's writer does."""
    version = option_text(options.get("version", DEFAULT_AVRO_VERSION)).strip()
    if version not in AVRO_VERSIONS:
        raise GlueError(
            f"avro format_options version={options.get('version')!r}: Glue writes version "
            f"{' or '.join(AVRO_VERSIONS)} (1.7 by default: decimal, date and timestamp as "
            "strings; 1.8: logical types)"
        )
    fields = {"avro_version": version, "compression": "none", "avro_codec": "null"}
    if given is not None:
        text = option_text(given).strip().lower()
        if text in LINE_COMPRESSION:
            fields["compression"] = text
        elif text in AVRO_CODECS:
            fields["avro_codec"] = AVRO_CODECS[text]
        else:
            known = sorted(set(LINE_COMPRESSION) | set(AVRO_CODECS))
            raise GlueError(f"avro connection_options compression={given!r}: one of {known}")
    if "compression" in options:
        text = option_text(options["compression"]).strip().lower()
        if text in AVRO_CODECS:
            fields["avro_codec"] = AVRO_CODECS[text]
        else:
            warn_ignored(
                "avro format_options",
                [f"compression={options['compression']!r}"],
                f"not an Avro codec ({', '.join(sorted(AVRO_CODECS))}); Glue's Avro writer "
                "takes its compression from connection_options",
            )
    return fields
