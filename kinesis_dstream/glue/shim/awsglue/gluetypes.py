"""``awsglue.gluetypes``: Glue's schema classes (``DynamicFrame.schema()`` returns them)."""

from kinesis_dstream.glue.frames.gluetypes import *  # noqa: F403
from kinesis_dstream.glue.frames.gluetypes import __all__  # noqa: F401
