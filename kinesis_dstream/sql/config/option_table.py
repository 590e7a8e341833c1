"""Every option name of the three JVM connectors, mapped to one canonical name each.

Databricks' ``kinesis`` source, the awslabs ``aws-kinesis`` connector (whose names may
carry a ``kinesis.`` prefix, accepted on every name) and AWS Glue's Kinesis connection
name the same knobs differently. Each canonical name lists every accepted spelling
(compared lower-case); :mod:`.options` parses the values; :mod:`.option_docs` says
what each does here and where the behaviour differs.
"""

from __future__ import annotations

#: Connection options, shared by the source and the sink.
_SHARED = {
    "streamName": ("streamName",),
    "streamARN": ("streamARN",),
    "region": ("region", "regionName"),
    #: awslabs: the stream's region, where it differs from the connector's (``region``).
    "kinesisRegion": ("kinesisRegion",),
    "endpointUrl": ("endpointUrl", "endpoint"),
    "awsAccessKey": ("awsAccessKey", "awsAccessKeyId"),
    "awsSecretKey": ("awsSecretKey",),
    "sessionToken": ("sessionToken", "awsSessionToken"),
    "roleArn": ("roleArn", "stsRoleArn", "awsSTSRoleARN"),
    "roleExternalId": ("roleExternalId",),
    "roleSessionName": ("roleSessionName", "stsSessionName", "awsSTSSessionName"),
    "stsEndpointUrl": ("stsEndpointUrl", "awsSTSEndpoint"),
    "credentialProviderClass": ("credentialProviderClass",),
    "credentialProviderParam": ("credentialProviderParam",),
}

SOURCE_ALIASES = {
    **_SHARED,
    "initialPosition": ("initialPosition", "startingPosition"),
    # a batch read's bounds (spark.read), Kafka's names
    "startingOffsets": ("startingOffsets",),
    "startingTimestamp": ("startingTimestamp",),
    "endingOffsets": ("endingOffsets",),
    "endingTimestamp": ("endingTimestamp",),
    "maxRecordsPerFetch": (
        "maxRecordsPerFetch",
        "getRecords.numberOfRecordsPerFetch",
        "maxRecordPerRead",
    ),
    "maxFetchRecordsPerShard": ("maxFetchRecordsPerShard",),
    "maxRecordsPerBatch": ("maxRecordsPerBatch",),
    "minFetchPeriod": ("minFetchPeriod", "getRecords.fetchIntervalMs"),
    "idleTimeBetweenReadsInMs": ("idleTimeBetweenReadsInMs",),
    "addIdleTimeBetweenReads": ("addIdleTimeBetweenReads",),
    "maxFetchRate": ("maxFetchRate",),
    # one bound, three units: a duration string, milliseconds, seconds
    "maxFetchDuration": ("maxFetchDuration",),
    "maxFetchTimeInMs": ("maxFetchTimeInMs",),
    "maxFetchTimePerShardSec": ("maxFetchTimePerShardSec",),
    "fetchBufferSize": ("fetchBufferSize",),
    "shardsPerTask": ("shardsPerTask",),
    "maxShardsPerDescribe": ("maxShardsPerDescribe",),
    "describeShardInterval": ("describeShardInterval", "shardFetchInterval"),
    "failOnDataLoss": ("failOnDataLoss",),
    "numRetries": ("numRetries", "clientNumRetries"),
    "retryIntervalMs": ("retryIntervalMs", "clientRetryIntervalsMs"),
    "maxRetryIntervalMs": ("maxRetryIntervalMs", "clientMaxRetryIntervalMs"),
    "minBatchesToRetain": ("minBatchesToRetain",),
    "checkNewRecordThreads": ("checkNewRecordThreads",),
    "metadataCommitterType": ("metadataCommitterType",),
    "metadataPath": ("metadataPath",),
    "dynamodbTableName": ("dynamodb.tableName",),
    "endsLocationFile": ("endsLocationFile",),
    "metadataNumRetries": ("metadataNumRetries",),
    "metadataRetryIntervalsMs": ("metadataRetryIntervalsMs",),
    "metadataMaxRetryIntervalMs": ("metadataMaxRetryIntervalMs",),
    "avoidEmptyBatches": ("avoidEmptyBatches",),
    "addRecordTimestamp": ("addRecordTimestamp",),
    "emitConsumerLagMetrics": ("emitConsumerLagMetrics",),
    "classification": ("classification",),
    "schema": ("schema",),
    "inferSchema": ("inferSchema",),
    "delimiter": ("delimiter",),
    "avroSchema": ("avroSchema",),
    "grokPattern": ("grokPattern",),
    "grokCustomPatterns": ("grokCustomPatterns",),
    # a Glue Schema Registry schema (a catalog table's SchemaReference, camelCase)
    "registryName": ("registryName",),
    "schemaName": ("schemaName",),
    "schemaArn": ("schemaArn",),
    "schemaVersionNumber": ("schemaVersionNumber",),
    "schemaVersionId": ("schemaVersionId",),
    "registryEndpointUrl": ("registryEndpointUrl",),
    "coalesceThresholdBlockSize": ("coalesceThresholdBlockSize",),
    "coalesceBinSize": ("coalesceBinSize",),
    "dropAggregatesOutsideShard": ("dropAggregatesOutsideShard",),
    "idleShardPollMs": ("idleShardPollMs",),
    # enhanced fan-out
    "consumerMode": ("consumerMode",),
    "consumerType": ("consumerType",),
    "consumerName": ("consumerName",),
    "consumerNamePrefix": ("consumerNamePrefix",),
    "requireConsumerDeregistration": ("requireConsumerDeregistration",),
    "consumerRefreshInterval": ("consumerRefreshInterval",),
    "subscribeToShardTimeout": ("subscribeToShard.timeoutSec",),
    "subscribeToShardMaxRetries": ("subscribeToShard.maxRetries",),
    "fanoutConsumerARN": ("fanoutConsumerARN",),
}

SINK_ALIASES = {
    **_SHARED,
    "aggregationEnabled": ("aggregationEnabled", "sink.aggregationEnabled"),
    "partitionKey": ("partitionKey",),
    "recordMaxBufferedTime": ("recordMaxBufferedTime", "sink.recordMaxBufferedTimeMs"),
    "aggregationMaxSize": ("aggregationMaxSize",),
    "aggregationMaxCount": ("aggregationMaxCount",),
    "producerRateLimit": ("producerRateLimit",),
    "collectionMaxCount": ("collectionMaxCount",),
    "collectionMaxSize": ("collectionMaxSize",),
    "flushWaitTimeMs": ("sink.flushWaitTimeMs",),
    "maxConnections": ("sink.maxConnections",),
    "recordTtl": ("sink.recordTtl",),
}

#: Accepted options whose behaviour cannot exist here: what they do elsewhere, and why not.
NO_EFFECT = {
    "coalesceThresholdBlockSize": (
        "Databricks coalesces its prefetched Spark blocks; this source has no prefetched "
        "blocks (each range is read by the task that delivers it)"
    ),
    "coalesceBinSize": "as coalesceThresholdBlockSize: there are no prefetched blocks",
    "avoidEmptyBatches": (
        "always on: a micro-batch runs only when a shard has new records (Glue's default is off)"
    ),
    "flushWaitTimeMs": (
        "the awslabs sink polls its KPL daemon on task end; this sink's task-end flush "
        "returns when every record is written or fails the task"
    ),
    "maxConnections": (
        "each write task sends its PutRecords calls one after another on one connection"
    ),
}
