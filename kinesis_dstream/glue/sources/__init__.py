"""Reading: ``create_data_frame`` / ``create_dynamic_frame`` as a streaming DataFrame
through this library's Kinesis source, with Glue's inferred schema and corrupt records."""
