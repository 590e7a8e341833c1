"""The Glue Data Catalog: tables read with ``GetTable`` and mapped onto a source or sink,
the file formats they name, and the updates a write to S3 makes."""
