"""What each option means here, and which connector spells it how: the options reference.

:mod:`.option_table` says which spellings are one option; this module says, per canonical
name, its default and what it does here (:data:`OPTION_DOCS`), and which spellings each
JVM connector documents (:data:`CONNECTOR_NAMES`: 98 names in all, counted per
connector; Glue's grok names are the catalog table parameters its streaming page
documents). The documentation's option reference is generated from both, and a test
fails when a canonical name has no entry here or a connector's name is not in the table.
"""

from __future__ import annotations

#: The names each connector's document gives, as it spells them (awslabs' without the
#: ``kinesis.`` prefix, which every name accepts), source and sink together.
CONNECTOR_NAMES = {
    "Databricks": (
        "streamName", "region", "endpoint", "initialPosition", "maxRecordsPerFetch",
        "maxFetchRate", "minFetchPeriod", "maxFetchDuration", "fetchBufferSize",
        "shardsPerTask", "shardFetchInterval", "awsAccessKey", "awsSecretKey", "roleArn",
        "roleExternalId", "roleSessionName", "coalesceThresholdBlockSize", "coalesceBinSize",
        "consumerMode", "requireConsumerDeregistration", "maxShardsPerDescribe",
        "consumerName", "consumerNamePrefix", "consumerRefreshInterval",
    ),
    "awslabs": (
        "endpointUrl", "region", "streamName", "consumerType", "failOnDataLoss",
        "maxFetchRecordsPerShard", "maxFetchTimePerShardSec", "startingPosition",
        "describeShardInterval", "minBatchesToRetain", "checkNewRecordThreads",
        "metadataCommitterType", "metadataPath", "metadataNumRetries",
        "metadataRetryIntervalsMs", "metadataMaxRetryIntervalMs", "clientNumRetries",
        "clientRetryIntervalsMs", "clientMaxRetryIntervalMs", "consumerName", "stsRoleArn",
        "stsSessionName", "stsEndpointUrl", "awsAccessKeyId", "awsSecretKey", "kinesisRegion",
        "credentialProviderClass", "credentialProviderParam", "dynamodb.tableName",
        "subscribeToShard.timeoutSec", "subscribeToShard.maxRetries",
        "getRecords.numberOfRecordsPerFetch", "getRecords.fetchIntervalMs",
        "sink.flushWaitTimeMs", "sink.recordMaxBufferedTimeMs", "sink.maxConnections",
        "sink.aggregationEnabled", "sink.recordTtl",
    ),
    "Glue": (
        "streamARN", "classification", "streamName", "endpointUrl", "delimiter",
        "startingPosition", "failOnDataLoss", "awsSTSRoleARN", "awsSTSSessionName",
        "awsSTSEndpoint", "maxFetchTimeInMs", "maxFetchRecordsPerShard", "maxRecordPerRead",
        "addIdleTimeBetweenReads", "idleTimeBetweenReadsInMs", "describeShardInterval",
        "numRetries", "retryIntervalMs", "maxRetryIntervalMs", "avoidEmptyBatches", "schema",
        "inferSchema", "avroSchema", "addRecordTimestamp", "emitConsumerLagMetrics",
        "partitionKey", "recordMaxBufferedTime", "aggregationEnabled", "aggregationMaxSize",
        "aggregationMaxCount", "producerRateLimit", "collectionMaxCount", "collectionMaxSize",
        "fanoutConsumerARN", "grokPattern", "grokCustomPatterns",
    ),
}  # fmt: skip

_CREDENTIALS = "the default credential chain"

#: canonical name -> (default here, what it does here)
OPTION_DOCS = {
    # connection: source and sink
    "streamName": (
        "required (or streamARN)",
        "the stream; the source takes a comma-separated list (one offset, ranges and end "
        "records per stream; the `stream` column tells them apart)",
    ),
    "streamARN": (
        "—",
        "the stream by ARN (its region must match `region`); wins over streamName; any "
        "partition and any account text, as AWS takes it (a warning where the account is not "
        "12 digits)",
    ),
    "region": ("from the ARN, the endpoint, `AWS_REGION`, the AWS config", "the AWS region"),
    "kinesisRegion": (
        "region",
        "awslabs': the stream's region where it differs from `region` (then the Kinesis "
        "client's; DynamoDB, S3 and STS keep `region`)",
    ),
    "endpointUrl": (
        "`AWS_ENDPOINT_URL_KINESIS` / `AWS_ENDPOINT_URL`, else the region's",
        "the Kinesis endpoint",
    ),
    "awsAccessKey": (_CREDENTIALS, "an access key id (with awsSecretKey)"),
    "awsSecretKey": (_CREDENTIALS, "the secret key of awsAccessKey"),
    "sessionToken": ("none", "a session token for the keys (this library's name)"),
    "roleArn": (
        "none",
        "a role to assume with STS for the stream (not for the Glue Schema Registry)",
    ),
    "roleExternalId": ("none", "the external id of the role to assume"),
    "roleSessionName": ("generated", "the session name of the role to assume"),
    "stsEndpointUrl": ("the SDK's", "the STS endpoint for the role"),
    "credentialProviderClass": (
        _CREDENTIALS,
        "a Python class path whose `load()` returns botocore credentials",
    ),
    "credentialProviderParam": ("none", "the string the credentials provider class is built with"),
    # source
    "initialPosition": (
        "latest",
        "where a new query starts: `latest` (pinned to the query's first start), "
        "`trim_horizon`, `earliest`, or AT_TIMESTAMP in each connector's spelling",
    ),
    "startingOffsets": (
        "earliest (batch reads only)",
        "a batch read's start, Kafka's name: `earliest` or JSON "
        '`{"stream": {"shardId-…": "<sequence number>"}}` (inclusive; shards left out: '
        "earliest); see [Batch reads](../batch-reads.md)",
    ),
    "startingTimestamp": (
        "none (batch reads only)",
        "a batch read's start: records that arrived at or after it (epoch milliseconds as "
        "Kafka's, or ISO-8601); wins over startingOffsets and initialPosition",
    ),
    "endingOffsets": (
        "latest (batch reads only)",
        "a batch read's end, exclusive: `latest` (records that arrived before the read was "
        "planned) or JSON of sequence numbers (shards left out: latest)",
    ),
    "endingTimestamp": (
        "none (batch reads only)",
        "a batch read's end: records that arrived before it (exclusive, as Kafka's); wins "
        "over endingOffsets",
    ),
    "maxRecordsPerFetch": ("10000", "records per GetRecords call"),
    "maxFetchRecordsPerShard": ("100000", "records per shard per micro-batch"),
    "maxRecordsPerBatch": (
        "none",
        "records per micro-batch (Spark's `ReadMaxRows`), shared among the shards with data "
        "(this library's name)",
    ),
    "minFetchPeriod": (
        "200ms (at least 200ms; Databricks: 400ms)",
        "the gap between GetRecords calls on a shard",
    ),
    "idleTimeBetweenReadsInMs": (
        "1000 with addIdleTimeBetweenReads",
        "Glue's gap between reads; applied also when given alone",
    ),
    "addIdleTimeBetweenReads": ("false", "apply idleTimeBetweenReadsInMs (Glue)"),
    "maxFetchRate": (
        "no limit (Databricks: 1.0)",
        "MB/s one range read takes from its shard (at most 2.0)",
    ),
    "maxFetchDuration": (
        "none",
        "time bound of one range read (a duration): the read stops, its end is recorded, "
        "replays read exactly to it",
    ),
    "maxFetchTimeInMs": ("none", "the same bound in milliseconds (Glue)"),
    "maxFetchTimePerShardSec": ("none", "the same bound in seconds, at least 10 (awslabs)"),
    "fetchBufferSize": (
        "256 MiB a range",
        "data bytes per micro-batch (`10mb`, `2gb`), shared equally by its ranges",
    ),
    "shardsPerTask": (
        "near-tip ranges at most 64 a task, ranges of shards behind 2 a task, at least 2 "
        "tasks of each (Databricks: 5); batch reads: 2 a task, at least 2 tasks",
        "shard ranges per read task, read concurrently by the task's threads",
    ),
    "maxShardsPerDescribe": ("the service's", "ListShards page size (1-10000)"),
    "describeShardInterval": ("1s", "how often new shards are looked for"),
    "failOnDataLoss": (
        "false",
        "fail on trimmed or expired data instead of logging, counting and going on from "
        "TRIM_HORIZON",
    ),
    "numRetries": ("3", "Kinesis call tries"),
    "retryIntervalMs": ("100", "first wait between Kinesis call tries (doubling)"),
    "maxRetryIntervalMs": ("10000", "largest wait between Kinesis call tries"),
    "minBatchesToRetain": ("2", "committed batches whose range ends are kept"),
    "checkNewRecordThreads": ("8", "driver threads peeking at shards for new records"),
    "metadataCommitterType": (
        "HDFS",
        "where range ends are recorded: `HDFS` (a directory, or `s3://`) or `DYNAMODB`",
    ),
    "metadataPath": (
        "`~/.kinesis_dstream/sql-ends` (each process's own home)",
        "the end store's directory every executor and the driver see, or `s3://bucket/prefix` "
        "(set it on a multi-node cluster)",
    ),
    "dynamodbTableName": (
        "none",
        "the end store's DynamoDB table, with `metadataCommitterType=DYNAMODB`",
    ),
    "endsLocationFile": (
        "none",
        "set by the Glue layer, not by users: a file naming where the range ends go, "
        "written by `forEachBatch` when its query starts (inside its checkpoint)",
    ),
    "metadataNumRetries": ("6", "end-store tries"),
    "metadataRetryIntervalsMs": ("100", "first wait between end-store tries"),
    "metadataMaxRetryIntervalMs": ("2000", "largest wait between end-store tries"),
    "avoidEmptyBatches": (
        "always on",
        "no empty micro-batch runs: a batch runs only for new records",
    ),
    "addRecordTimestamp": ("false", "adds a `__src_timestamp` column (arrival time)"),
    "emitConsumerLagMetrics": (
        "false",
        "publishes CloudWatch `glue.driver.streaming.maxConsumerLagInMs` (namespace `Glue`, "
        "dimension `StreamName`) per batch",
    ),
    "classification": (
        "none: the record's columns",
        "payload parsing: `json`, `csv` or `avro` gives the payload's columns",
    ),
    "schema": ("none", "the payload's schema: Spark DDL (json, csv) or the Avro writer's schema"),
    "inferSchema": ("false", "infer the payload's schema once at `load()` from a bounded sample"),
    "delimiter": (",", "csv's one-character delimiter"),
    "avroSchema": ("none", "the deprecated name of an Avro `schema`"),
    "grokPattern": (
        "none",
        "classification `grok`: the pattern a whole line must match; its named captures "
        "(`%{PATTERN:field:type}`, Glue's built-in and custom patterns) are the columns",
    ),
    "grokCustomPatterns": (
        "none",
        "classification `grok`: `NAME regex` lines separated by `\\n`, usable in grokPattern "
        "and in each other",
    ),
    "registryName": (
        "none",
        "classification `avro` from the Glue Schema Registry (with schemaName): records "
        "are registry-framed, the columns come from the schema version",
    ),
    "schemaName": ("none", "the registry's schema (with registryName)"),
    "schemaArn": ("none", "the registry's schema by ARN (instead of registryName, schemaName)"),
    "schemaVersionNumber": (
        "the latest, looked up once at `load()`",
        "the version whose schema is the reader's (the columns)",
    ),
    "schemaVersionId": ("none", "the reader's version by its id (a UUID)"),
    "registryEndpointUrl": (
        "`AWS_ENDPOINT_URL_GLUE` / `AWS_ENDPOINT_URL`, else the region's",
        "the Glue endpoint the registry is read from (with the source's keys or provider, "
        "else the default chain; never the stream's STS role)",
    ),
    "coalesceThresholdBlockSize": (
        "—",
        "no effect here, accepted and logged once: Databricks coalesces prefetched Spark "
        "blocks; this source has none",
    ),
    "coalesceBinSize": (
        "—",
        "no effect here, accepted and logged once (as coalesceThresholdBlockSize)",
    ),
    "dropAggregatesOutsideShard": (
        "false: delivered, counted",
        "drop KPL aggregates holding records of other shards, as the KCL does (counted) (this "
        "library's name)",
    ),
    "idleShardPollMs": (
        "0 (off: every trigger peeks every shard; at most 60000)",
        "the longest an idle shard goes unpeeked; the wait doubles from minFetchPeriod per "
        "idle peek, so a waking shard's first record may wait that long (this library's name)",
    ),
    "consumerMode": (
        "polling",
        "the transport: `polling` or `efo` (enhanced fan-out, SubscribeToShard)",
    ),
    "consumerType": ("GetRecords", "the transport: `GetRecords` or `SubscribeToShard`"),
    "consumerName": (
        "`kinesis_dstream_` + the query's id",
        "the enhanced fan-out consumer: one name, or one per stream (comma-separated); "
        "registered if missing",
    ),
    "consumerNamePrefix": (
        "kinesis_dstream_",
        "without consumerName: prefix + the query's id, stable across restarts",
    ),
    "requireConsumerDeregistration": ("false", "deregister the consumer on a graceful stop"),
    "consumerRefreshInterval": (
        "300s (at most 3600s)",
        "how often the consumer is checked; one deleted under the query is registered again",
    ),
    "subscribeToShardTimeout": ("60", "seconds one (re)subscription may take"),
    "subscribeToShardMaxRetries": ("10", "retries of one (re)subscription"),
    "fanoutConsumerARN": (
        "none",
        "this consumer, by ARN: used as is, never registered or deregistered",
    ),
    # sink
    "aggregationEnabled": ("false (awslabs and Glue: true)", "KPL aggregation, grouped by shard"),
    "partitionKey": (
        "the `partitionKey` column",
        "the input's column by this name, else this fixed key",
    ),
    "recordMaxBufferedTime": (
        "until a batch is full",
        "longest a record waits in the buffer (checked at each put and at the task's end)",
    ),
    "aggregationMaxSize": ("51200", "bytes an aggregate holds at most"),
    "aggregationMaxCount": ("4294967295", "user records an aggregate holds at most"),
    "producerRateLimit": (
        "none",
        "per-shard pacing: percent of a shard's 1,000 records/s and 1 MiB/s",
    ),
    "collectionMaxCount": ("500", "records per PutRecords call"),
    "collectionMaxSize": ("5 MiB (at least 1 MiB)", "bytes per PutRecords call"),
    "flushWaitTimeMs": (
        "—",
        "no effect here, accepted and logged once: the task's last flush returns when all is "
        "written",
    ),
    "maxConnections": (
        "—",
        "no effect here, accepted and logged once: each task writes on one connection",
    ),
    "recordTtl": (
        "60s of retries",
        "a record not written within this time fails the batch, naming stream and count "
        "(awslabs drops it)",
    ),
}  # fmt: skip
