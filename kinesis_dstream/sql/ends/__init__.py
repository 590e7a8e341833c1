"""The end store: write-once range ends (endstore: a directory, DynamoDB; endstore_s3;
endstore_options opens the one the options name)."""
