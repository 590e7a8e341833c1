"""The end store: write-once range ends (store: a directory, DynamoDB; s3;
opening opens the one the options name)."""
