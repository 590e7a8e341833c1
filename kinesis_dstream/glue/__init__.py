"""Run AWS Glue streaming scripts unchanged on any PySpark (docs/glue.md).

``kinesis-dstream glue run SCRIPT [--local] -- --JOB_NAME j --TempDir DIR`` runs a Glue
script as Glue would; :func:`install` makes ``import awsglue`` work in a program of your
own. The ``awsglue`` API a streaming script uses (``GlueContext``, ``getResolvedOptions``,
``Job``, ``DynamicFrame``, ``awsglue.transforms``) maps onto this library's Kinesis
source and sink and an S3 writer; what it does not provide fails at once, naming itself.
"""

from __future__ import annotations

from .errors import GlueArgumentError, GlueError, NotProvidedError
from .job.installing import install

__all__ = ["GlueArgumentError", "GlueError", "NotProvidedError", "install"]
