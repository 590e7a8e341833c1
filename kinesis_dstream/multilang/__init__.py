"""A pure-Python MultiLangDaemon: run amazon-kclpy record processors without Java."""

from .daemon import MultiLangDaemon
from .properties import MultiLangConfig, PropertiesError, load_properties, parse_properties

__all__ = [
    "MultiLangConfig",
    "MultiLangDaemon",
    "PropertiesError",
    "load_properties",
    "parse_properties",
]
