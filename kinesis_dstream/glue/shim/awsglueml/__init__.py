"""``awsglueml``: Glue's machine-learning transforms, which run on Glue's service."""
