"""Not provided by kinesis_dstream's Glue layer (docs/glue.md): importing it fails."""

from kinesis_dstream.glue.errors import not_provided

raise not_provided("module awsglue.data_source")
