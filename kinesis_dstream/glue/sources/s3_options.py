"""Glue's S3 connection options and file format options of a batch read, checked.

``create_dynamic_frame.from_options(connection_type="s3", connection_options={...},
format=..., format_options={...})`` as AWS documents them. Honoured: ``paths``,
``recurse``, ``exclusions`` (Glue's glob patterns), ``compressionType``/``compression``,
``groupFiles``/``groupSize``, ``excludeStorageClasses``, ``boundedFiles``/``boundedSize``,
``attachFilename``/``attachTimestamp``, ``isFailFast``, Parquet's ``mergeSchema``; the
formats' options below. Accepted with no effect, each named once in a warning: the job
bookmark options (``maxBand``, ``maxFilesInBand``), ``useS3ListImplementation``,
``optimizePerformance`` (Glue's vectorized readers: the same records) and the writers'
options. Refused in one line, when the call is made: what would change the records (a
format this layer does not read, a separator of more than one character, an Avro version
Glue has not).

CSV: ``separator`` (``,``), ``quoteChar`` (``"``; ``-1`` turns quoting off),
``escaper`` (none), ``multiLine`` (false), ``withHeader`` (false), ``skipFirst`` (false).
JSON: ``multiLine`` (false), ``jsonPath`` (``$``, ``$[*]``, ``$.a.b``, ``$.a[*]``...).
Avro: ``version`` (1.7: logical types read as their Avro primitive, as Glue's 1.7
reader; 1.8: decimal, date and timestamp-millis as their types).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

from ..errors import GlueError, not_provided
from ..options import int_option, named_option, option_text
from ..sinks.file_target import AVRO_VERSIONS, DEFAULT_AVRO_VERSION, NO_QUOTE, warn_ignored

#: The formats read, by Glue's names (``glueparquet`` is a writer's name; read as Parquet).
FORMATS = {
    "csv": "csv",
    "json": "json",
    "parquet": "parquet",
    "glueparquet": "parquet",
    "orc": "orc",
    "avro": "avro",
}
#: Glue's automatic grouping starts at this many files (AWS's S3 connection options).
AUTO_GROUP_FILES = 50_000
#: A group's size when grouping without ``groupSize`` (Spark's maxPartitionBytes).
DEFAULT_GROUP_BYTES = 128 * 1024 * 1024
#: ``compressionType`` values and pyarrow's codec names.
COMPRESSIONS = {"gzip": "gzip", "bzip": "bz2", "bzip2": "bz2", "none": None}
HONOURED = (
    "paths",
    "recurse",
    "exclusions",
    "compressionType",
    "compression",
    "groupFiles",
    "groupSize",
    "excludeStorageClasses",
    "boundedFiles",
    "boundedSize",
    "attachFilename",
    "attachTimestamp",
    "isFailFast",
    "mergeSchema",
)
NO_EFFECT = {
    "maxBand": "a job bookmark option; streaming jobs keep their place in checkpoints",
    "maxFilesInBand": "a job bookmark option; streaming jobs keep their place in checkpoints",
    "useS3ListImplementation": "the listing is paged the same way",
    "catalogPartitionPredicate": "it filters a catalog table's partitions",
}
FORMAT_KEYS = {
    "csv": ("separator", "quoteChar", "escaper", "multiLine", "withHeader", "skipFirst"),
    "json": ("multiLine", "jsonPath"),
    "avro": ("version",),
    "parquet": (),
    "orc": (),
}
FORMAT_NO_EFFECT = ("optimizePerformance", "withSchema", "writeHeader", "strictCheckForQuoting")
_JSON_PATH = re.compile(r"^\$((?:\.[A-Za-z_][\w-]*|\[['\"][^'\"]+['\"]\])*)(\[\*\])?$")


def flag(value: Any) -> bool:
    return option_text(value).strip().lower() == "true"


@dataclass(frozen=True)
class CsvFormat:
    separator: str = ","
    quote: Optional[str] = '"'
    escape: Optional[str] = None
    multi_line: bool = False
    with_header: bool = False
    skip_first: bool = False


@dataclass(frozen=True)
class JsonFormat:
    multi_line: bool = False
    #: The keys down to the records (``$.a.b`` -> ["a", "b"]); the members of an array
    #: found there are the records (``[*]``, or an array without it, as Spark reads one).
    path: tuple = ()


@dataclass(frozen=True)
class S3Read:
    """One batch read of files: where, which, how they parse. JSON round-trips (the
    plan travels to the executors as a data source option)."""

    paths: tuple
    fmt: str
    recurse: bool = False
    exclusions: tuple = ()
    compression: Optional[str] = None
    #: ``groupFiles``: ``auto`` (grouped past :data:`AUTO_GROUP_FILES` files, as Glue),
    #: ``inpartition`` or ``none``.
    grouping: str = "auto"
    group_bytes: int = DEFAULT_GROUP_BYTES
    storage_classes: tuple = ()
    bounded_files: Optional[int] = None
    bounded_bytes: Optional[int] = None
    filename_column: Optional[str] = None
    timestamp_column: Optional[str] = None
    fail_fast: bool = False
    merge_schema: bool = False
    #: A partitioned catalog table's keys: columns read from the files' ``key=value``
    #: folders (strings; the frame casts them to the keys' types).
    partition_keys: tuple = ()
    avro_version: str = DEFAULT_AVRO_VERSION
    csv: CsvFormat = field(default_factory=CsvFormat)
    json: JsonFormat = field(default_factory=JsonFormat)

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> S3Read:
        raw = json.loads(text)
        raw["csv"] = CsvFormat(**raw["csv"])
        raw["json"] = JsonFormat(**{**raw["json"], "path": tuple(raw["json"]["path"])})
        for key in ("paths", "exclusions", "storage_classes", "partition_keys"):
            raw[key] = tuple(raw[key])
        return cls(**raw)


def _list(value: Any, what: str) -> tuple:
    """A list option: a list, or a JSON list in a string (``"[\\"**.pdf\\"]"``)."""
    if value is None:
        return ()
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return ()
        try:
            value = json.loads(text) if text.startswith("[") else [text]
        except ValueError:
            raise GlueError(f"s3 connection_options {what}={value!r} is not a JSON list") from None
    if not isinstance(value, (list, tuple)):
        raise GlueError(f"s3 connection_options {what}={value!r}: give a list")
    return tuple(str(v) for v in value)


def _count(options: Mapping[str, Any], name: str) -> Optional[int]:
    value = named_option(options, name)
    if value is None:
        return None
    number = int_option(value, 1)
    if number is None:
        raise GlueError(f"s3 connection_options {name}={value!r}: a positive integer")
    return number


def parse_s3_read(
    connection_options: Mapping[str, Any], fmt: Any, format_options: Mapping[str, Any]
) -> S3Read:
    """The checked read of ``create_dynamic_frame.from_options(connection_type="s3")``."""
    name = str(fmt or "").strip().lower()
    if not name:
        raise GlueError(
            f"reading s3 files needs format= (one of {', '.join(FORMATS)}), as Glue's does"
        )
    if name not in FORMATS:
        raise not_provided(
            f"reading s3 files in format {fmt!r}", f"formats read: {', '.join(FORMATS)}"
        )
    kind = FORMATS[name]
    paths = _list(named_option(connection_options, "paths"), "paths")
    if not paths:
        raise GlueError("s3 connection_options 'paths' is required: a list of s3:// paths")
    no_effect = {name.lower(): why for name, why in NO_EFFECT.items()}
    for key in sorted(k for k in connection_options if str(k).lower() in no_effect):
        warn_ignored("s3 connection_options", [key], no_effect[str(key).lower()])
    known = {k.lower() for k in (*HONOURED, *NO_EFFECT)}
    warn_ignored(
        "s3 connection_options",
        [k for k in connection_options if str(k).lower() not in known],
        "not options of Glue's S3 reader",
    )
    compression_text = (
        option_text(
            named_option(
                connection_options,
                "compressionType",
                named_option(connection_options, "compression", ""),
            )
        )
        .strip()
        .lower()
    )
    if compression_text and compression_text not in COMPRESSIONS:
        raise GlueError(
            f"s3 connection_options compressionType={compression_text!r}: one of "
            f"{sorted(COMPRESSIONS)} (or none: compressed files are known by their extension)"
        )
    grouping = option_text(named_option(connection_options, "groupFiles", "")).strip().lower()
    if grouping not in ("", "inpartition", "none"):
        raise GlueError(f"s3 connection_options groupFiles={grouping!r}: inPartition or none")
    return S3Read(
        paths=paths,
        fmt=kind,
        recurse=flag(named_option(connection_options, "recurse", False)),
        exclusions=_list(named_option(connection_options, "exclusions"), "exclusions"),
        compression=COMPRESSIONS.get(compression_text) if compression_text else None,
        grouping=grouping or "auto",
        group_bytes=_count(connection_options, "groupSize") or DEFAULT_GROUP_BYTES,
        storage_classes=tuple(
            s.upper() for s in _list(named_option(connection_options, "excludeStorageClasses"), "x")
        ),
        bounded_files=_count(connection_options, "boundedFiles"),
        bounded_bytes=_count(connection_options, "boundedSize"),
        filename_column=_column(connection_options, "attachFilename"),
        timestamp_column=_column(connection_options, "attachTimestamp"),
        fail_fast=flag(named_option(connection_options, "isFailFast", False)),
        merge_schema=flag(named_option(connection_options, "mergeSchema", False)),
        **_format_fields(kind, name, dict(format_options or {})),
    )


def _column(options: Mapping[str, Any], name: str) -> Optional[str]:
    value = named_option(options, name)
    text = option_text(value).strip() if value is not None else ""
    return text or None


def _format_fields(kind: str, name: str, options: dict) -> dict:
    keys = {k.lower() for k in FORMAT_KEYS[kind]}
    no_effect_names = {k.lower() for k in FORMAT_NO_EFFECT}
    no_effect = [k for k in options if k.lower() in no_effect_names]
    warn_ignored(f"{name} format_options", no_effect, "they do not change what is read")
    unknown = [k for k in options if k.lower() not in keys | no_effect_names]
    warn_ignored(f"{name} format_options", unknown, "not options of Glue's reader")
    if kind == "csv":
        return {"csv": _csv(options)}
    if kind == "json":
        return {"json": _json(options)}
    if kind == "avro":
        version = option_text(named_option(options, "version", DEFAULT_AVRO_VERSION)).strip()
        if version not in AVRO_VERSIONS:
            raise GlueError(
                f"avro format_options version={version!r}: Glue reads version "
                f"{' or '.join(AVRO_VERSIONS)}"
            )
        return {"avro_version": version}
    return {}


def _char(options: dict, name: str, default: Optional[str]) -> Optional[str]:
    value = named_option(options, name)
    if value is None:
        return default
    text = option_text(value)
    if len(text) != 1:
        raise GlueError(f"csv format_options {name}={value!r}: one character")
    return text


def _csv(options: dict) -> CsvFormat:
    quote_text = named_option(options, "quoteChar")
    quote = (
        None
        if quote_text is not None and option_text(quote_text).strip() in NO_QUOTE
        else (_char(options, "quoteChar", '"'))
    )
    escape = named_option(options, "escaper")
    return CsvFormat(
        separator=_char(options, "separator", ",") or ",",
        quote=quote,
        escape=None
        if escape in (None, "") or str(escape).lower() == "none"
        else (_char(options, "escaper", None)),
        multi_line=flag(named_option(options, "multiLine", False)),
        with_header=flag(named_option(options, "withHeader", False)),
        skip_first=flag(named_option(options, "skipFirst", False)),
    )


def _json(options: dict) -> JsonFormat:
    path_text = option_text(named_option(options, "jsonPath", "$")).strip() or "$"
    match = _JSON_PATH.match(path_text)
    if match is None:
        raise GlueError(
            f"json format_options jsonPath={path_text!r}: this layer reads a path of keys "
            "from the root, optionally ending in [*] ($, $[*], $.a.b, $.a[*], $['a b'])"
        )
    keys = tuple(
        k[1:] if k.startswith(".") else k[2:-2]
        for k in re.findall(r"\.[A-Za-z_][\w-]*|\[['\"][^'\"]+['\"]\]", match.group(1))
    )
    return JsonFormat(
        multi_line=flag(named_option(options, "multiLine", False)),
        path=keys,
    )
