"""``awsglue.gluetypes``: Glue's own schema classes, as ``DynamicFrame.schema()`` returns.

Glue's schema types are not Spark's: each carries ``properties``, ``IntegerType`` is named
``int``, ``DecimalType()`` is (10, 2), a field is a :class:`Field` whose type is its
``dataType``, and there are ``ChoiceType``, ``EnumType`` and ``UnknownType``. Scripts walk
them (Glue Studio's Drop Null Fields helper: ``isinstance(schema, StructType)``,
``for field in schema``, ``NullType``), so they have aws-glue-libs' names, constructors,
``typeName``, ``jsonValue`` and ``__repr__``. :func:`from_spark` turns a DataFrame's schema
into them; a field with no value in the batch is a ``NullType``, as Glue infers it.
"""

from __future__ import annotations

from typing import Any, Optional


class DataType:
    """A Glue schema type: its ``properties`` and JSON form."""

    def __init__(self, properties: Optional[dict] = None) -> None:
        self.properties = {} if properties is None else properties

    def __eq__(self, other: object) -> bool:
        return isinstance(other, self.__class__) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash(str(self.__class__))

    @classmethod
    def typeName(cls) -> str:
        return cls.__name__[:-4].lower()

    def jsonValue(self) -> dict:
        return {"dataType": self.typeName(), "properties": self.properties}


class AtomicType(DataType):
    """A type without children."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.properties})"

    @classmethod
    def fromJsonValue(cls, json_value: dict) -> AtomicType:
        return cls(**{k: v for k, v in json_value.items() if k != "dataType"})


class BinaryType(AtomicType):
    pass


class BooleanType(AtomicType):
    pass


class ByteType(AtomicType):
    pass


class DateType(AtomicType):
    pass


class DecimalType(AtomicType):
    """Glue's decimal: (10, 2) unless told (Spark's bare decimal is (10, 0))."""

    def __init__(self, precision: int = 10, scale: int = 2, properties: Optional[dict] = None):
        super().__init__(properties)
        self.precision = precision
        self.scale = scale

    def __repr__(self) -> str:
        return f"DecimalType({self.precision}, {self.scale}, {self.properties})"

    def jsonValue(self) -> dict:
        return {**super().jsonValue(), "precision": self.precision, "scale": self.scale}


class DoubleType(AtomicType):
    pass


class EnumType(AtomicType):
    """A string of one of ``options``."""

    def __init__(self, options: list, properties: Optional[dict] = None) -> None:
        super().__init__(properties)
        self.options = list(options)

    def __repr__(self) -> str:
        shown = ",".join(self.options[:3]) + (",..." if len(self.options) > 3 else "")
        return f"EnumType([{shown}], {self.properties})"

    def jsonValue(self) -> dict:
        return {**super().jsonValue(), "options": list(self.options)}


class FloatType(AtomicType):
    pass


class IntegerType(AtomicType):
    @classmethod
    def typeName(cls) -> str:
        return "int"


class LongType(AtomicType):
    pass


class NullType(AtomicType):
    pass


class ShortType(AtomicType):
    pass


class StringType(AtomicType):
    pass


class TimestampType(AtomicType):
    pass


class TimestampNTZType(AtomicType):
    pass


class UnknownType(AtomicType):
    pass


class ArrayType(DataType):
    def __init__(self, elementType: Optional[DataType] = None, properties: Optional[dict] = None):
        super().__init__(properties)
        self.elementType = UnknownType() if elementType is None else elementType
        if not isinstance(self.elementType, DataType):
            raise TypeError(f"elementType should be DataType, got {type(elementType).__name__}")

    def __repr__(self) -> str:
        return f"ArrayType({self.elementType}, {self.properties})"

    def jsonValue(self) -> dict:
        return {**super().jsonValue(), "elementType": self.elementType.jsonValue()}

    @classmethod
    def fromJsonValue(cls, json_value: dict) -> ArrayType:
        return cls(_from_json(json_value["elementType"]), json_value.get("properties", {}))


class SetType(ArrayType):
    def __repr__(self) -> str:
        return f"SetType({self.elementType}, {self.properties})"


class ChoiceType(DataType):
    """One of several types (Glue's; a DataFrame column has one type: see docs/glue.md)."""

    def __init__(self, choices: Any = (), properties: Optional[dict] = None) -> None:
        super().__init__(properties)
        self.choices: dict = {}
        for choice in choices:
            self.add(choice)

    def __repr__(self) -> str:
        ordered = sorted(self.choices.values(), key=lambda c: c.typeName())
        return f"ChoiceType([{','.join(str(c) for c in ordered)}], {self.properties})"

    def add(self, new_choice: DataType) -> None:
        if new_choice.typeName() in self.choices:
            raise ValueError("Attempting to insert duplicate choice", new_choice)
        self.choices[new_choice.typeName()] = new_choice

    def jsonValue(self) -> dict:
        return {**super().jsonValue(), "choices": [c.jsonValue() for c in self.choices.values()]}

    @classmethod
    def fromJsonValue(cls, json_value: dict) -> ChoiceType:
        choices = [_from_json(c) for c in json_value["choices"]]
        return cls(choices, json_value.get("properties", {}))


class MapType(DataType):
    """A map of string keys to ``valueType`` (Glue's maps have string keys)."""

    def __init__(self, valueType: Optional[DataType] = None, properties: Optional[dict] = None):
        super().__init__(properties)
        self.valueType = UnknownType() if valueType is None else valueType

    def __repr__(self) -> str:
        return f"MapType({self.valueType}, {self.properties})"

    def jsonValue(self) -> dict:
        return {**super().jsonValue(), "valueType": self.valueType.jsonValue()}

    @classmethod
    def fromJsonValue(cls, json_value: dict) -> MapType:
        return cls(_from_json(json_value["valueType"]), json_value.get("properties", {}))


class Field:
    """A named field of a :class:`StructType`."""

    def __init__(self, name: str, dataType: DataType, properties: Optional[dict] = None) -> None:
        if not isinstance(dataType, DataType):
            raise TypeError(f"dataType should be DataType, got {type(dataType).__name__}")
        if not isinstance(name, str):
            raise TypeError(f"Field name must be a string, got {type(name).__name__}")
        self.name = name
        self.dataType = dataType
        self.properties = {} if properties is None else properties

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Field) and (self.name, self.dataType) == (
            other.name,
            other.dataType,
        )

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return f"Field({self.name}, {self.dataType}, {self.properties})"

    def jsonValue(self) -> dict:
        return {
            "name": self.name,
            "container": self.dataType.jsonValue(),
            "properties": self.properties,
        }

    @classmethod
    def fromJsonValue(cls, json_value: dict) -> Field:
        container = _from_json(json_value["container"])
        return cls(json_value["name"], container, json_value.get("properties", {}))


class StructType(DataType):
    """Fields in order; iterating gives the :class:`Field` objects."""

    def __init__(self, fields: Any = (), properties: Optional[dict] = None) -> None:
        super().__init__(properties)
        self.fields = list(fields)
        if not all(isinstance(f, Field) for f in self.fields):
            raise TypeError("fields should be a list of Field")
        self.field_map = {f.name: f for f in self.fields}

    def __iter__(self) -> Any:
        return iter(self.fields)

    def __repr__(self) -> str:
        return f"StructType([{','.join(str(f) for f in self.fields)}], {self.properties})"

    def add(self, field: Field) -> None:
        if not isinstance(field, Field):
            raise TypeError("field must be of type Field")
        self.fields.append(field)
        self.field_map[field.name] = field

    def hasField(self, field: Any) -> bool:
        return (field.name if isinstance(field, Field) else field) in self.field_map

    def getField(self, field: Any) -> Field:
        return self.field_map[field.name if isinstance(field, Field) else field]

    def jsonValue(self) -> dict:
        return {**super().jsonValue(), "fields": [f.jsonValue() for f in self.fields]}

    @classmethod
    def fromJsonValue(cls, json_value: dict) -> StructType:
        fields = [Field.fromJsonValue(f) for f in json_value["fields"]]
        return cls(fields, json_value.get("properties", {}))


_ATOMIC = (
    BinaryType,
    BooleanType,
    ByteType,
    DateType,
    DecimalType,
    DoubleType,
    EnumType,
    FloatType,
    IntegerType,
    LongType,
    NullType,
    ShortType,
    StringType,
    TimestampType,
    TimestampNTZType,
    UnknownType,
)
_ALL = {t.typeName(): t for t in (*_ATOMIC, ArrayType, ChoiceType, MapType, StructType, SetType)}


def _from_json(json_value: dict) -> Any:
    return _ALL[json_value["dataType"]].fromJsonValue(json_value)


#: Spark's atomic type names -> Glue's classes.
_FROM_SPARK = {
    "binary": BinaryType,
    "boolean": BooleanType,
    "tinyint": ByteType,
    "date": DateType,
    "double": DoubleType,
    "float": FloatType,
    "int": IntegerType,
    "bigint": LongType,
    "void": NullType,
    "smallint": ShortType,
    "string": StringType,
    "timestamp": TimestampType,
    "timestamp_ntz": TimestampNTZType,
}


def from_spark(spark_type: Any, empty: frozenset = frozenset(), path: tuple = ()) -> DataType:
    """Glue's type of a Spark DataType; a field whose path is in ``empty`` (no value in the
    batch) is a NullType, as Glue's schema of the records would have it."""
    from pyspark.sql import types as T

    if path in empty:
        return NullType()
    if isinstance(spark_type, T.StructType):
        return StructType(
            [
                Field(f.name, from_spark(f.dataType, empty, (*path, f.name)))
                for f in spark_type.fields
            ]
        )
    if isinstance(spark_type, T.ArrayType):
        return ArrayType(from_spark(spark_type.elementType, empty, (*path, "[]")))
    if isinstance(spark_type, T.MapType):
        return MapType(from_spark(spark_type.valueType, empty, (*path, "{}")))
    if isinstance(spark_type, T.DecimalType):
        return DecimalType(spark_type.precision, spark_type.scale)
    glue = _FROM_SPARK.get(spark_type.simpleString())
    return glue() if glue is not None else UnknownType()


__all__ = [
    "ArrayType",
    "AtomicType",
    "BinaryType",
    "BooleanType",
    "ByteType",
    "ChoiceType",
    "DataType",
    "DateType",
    "DecimalType",
    "DoubleType",
    "EnumType",
    "Field",
    "FloatType",
    "IntegerType",
    "LongType",
    "MapType",
    "NullType",
    "SetType",
    "ShortType",
    "StringType",
    "StructType",
    "TimestampNTZType",
    "TimestampType",
    "UnknownType",
]
