"""A folder put on ``sys.path`` by :func:`kinesis_dstream.glue.install`: it holds the
``awsglue`` package a Glue script imports. Nothing here is imported otherwise."""
