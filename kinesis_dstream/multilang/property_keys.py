"""The keys of a MultiLangDaemon properties file: which are honoured, which ignored.

The Java daemon sets every key on its configuration bean and silently ignores names it
does not know; ours refuses unknown names (a typo must not pass silently), so every key
the Java KCL 1.x, 2.x and 3.x daemons read is listed here: honoured, or accepted and
ignored because it tunes only how the JVM does the work. (KCL 1.x's keys are its
``KinesisClientLibConfigurator``'s: ``with<Key>`` setters of
``KinesisClientLibConfiguration`` up to the v1.x branch's last release, plus
``executableName``, ``processingLanguage`` and ``maxActiveThreads``.)
"""

from __future__ import annotations

#: Keys this daemon honours (both credential spellings: 3.x and 1.x/2.x).
HONOURED = frozenset(
    {
        "executableName",
        "streamName",
        "streamArn",
        "applicationName",
        "regionName",
        "initialPositionInStream",
        "initialPositionInStreamExtended",
        "AwsCredentialsProvider",
        "AWSCredentialsProvider",
        "AwsCredentialsProviderDynamoDB",
        "AWSCredentialsProviderDynamoDB",
        "AwsCredentialsProviderCloudWatch",
        "AWSCredentialsProviderCloudWatch",
        "processingLanguage",
        "failoverTimeMillis",
        "maxRecords",
        "idleTimeBetweenReadsInMillis",
        "maxLeasesForWorker",
        "maxLeasesToStealAtOneTime",
        "shardSyncIntervalMillis",
        "workerId",
        "workerIdentifier",
        "tableName",
        "retrievalMode",
        "consumerArn",
        "consumerName",
        "kinesisEndpoint",
        "dynamoDBEndpoint",
        "cloudWatchEndpoint",
        "timeoutInSeconds",
        "shutdownGraceMillis",
        "callProcessRecordsEvenForEmptyRecordList",
        "cleanupLeasesUponShardCompletion",
        "maxPendingProcessRecordsInput",
        "maxCacheByteSize",
        "maxRecordsCount",
        # This daemon's own: the children's protocol version (protocol_version.py).
        "multiLangProtocol",
    }
)

#: KCL keys that tune how the work is done, not what the application sees.
IGNORED = frozenset(
    {
        "parentShardPollIntervalMillis",
        # Positions are checked against the records given instead (stricter).
        "validateSequenceNumberBeforeCheckpointing",
        "taskBackoffTimeMillis",
        "metricsBufferTimeMillis",
        "metricsMaxQueueSize",
        "metricsLevel",
        "metricsEnabledDimensions",
        "maxActiveThreads",
        "userAgent",
        "maxGetRecordsThreadPool",
        "retryGetRecordsInSeconds",
        "millisBehindLatestThresholdForReducedTps",
        "listShardsBackoffTimeInMillis",
        "maxListShardsRetryAttempts",
        "maxLeaseRenewalThreads",
        "initialLeaseTableReadCapacity",
        "initialLeaseTableWriteCapacity",
        "billingMode",
        "skipShardSyncAtWorkerInitializationIfLeasesExist",
        "ignoreUnexpectedChildShards",
        "shardPrioritization",
        "schedulerInitializationBackoffTimeMillis",
        "logWarningForTaskAfterMillis",
        # Fan-out consumer registration retries: ours has its own bounded backoff.
        "maxDescribeStreamSummaryRetries",
        "maxDescribeStreamConsumerRetries",
        "registerStreamConsumerRetries",
        "retryBackoffMillis",
        "idleMillisBetweenCalls",
        "leaseTableDeletionProtectionEnabled",
        "leaseTablePitrEnabled",
        "clientVersionConfig",
        "gracefulLeaseHandoffTimeoutMillis",
        "isGracefulLeaseHandoffEnabled",
        "inMemoryWorkerMetricsCaptureFrequencyMillis",
        "workerMetricsReporterFreqInMillis",
        "noOfPersistedMetricsPerWorkerMetrics",
        "disableWorkerMetrics",
        "maxThroughputPerHostKBps",
        "dampeningPercentage",
        "reBalanceThresholdPercentage",
        "allowThroughputOvershoot",
        "varianceBalancingFrequency",
        "workerMetricsEMAAlpha",
        "staleWorkerMetricsEntryCleanupDuration",
        "leaseAssignmentIntervalMillis",
        # KCL 3.x / 3.5 lease-table tuning of the JVM's own scans and migration.
        "migrateAllEntitiesToLeaseTable",
        "tableMigrationCompleteBakeTimeSeconds",
        "leaseTableScanTotalSegments",
        "enablePriorityLeaseAssignment",
        # KCL 1.x keys: lease clean-up, shard-sync auditing and start-up tuning.
        "completedLeaseCleanupThresholdMillis",
        "garbageLeaseCleanupThresholdMillis",
        "leaseCleanupIntervalMillis",
        "leasesRecoveryAuditorExecutionFrequencyMillis",
        "leasesRecoveryAuditorInconsistencyConfidenceThreshold",
        "maxInitializationAttempts",
        "skipShardSyncAtStartupIfLeasesExist",
        "dataFetchingStrategy",
        # KCL 1.x keys its configurator could not set (an enum, an interface, a Date, a
        # ClientConfiguration): the Java daemon skipped them too.
        "shardSyncStrategyType",
        "shardPrioritizationStrategy",
        "timestampAtInitialPositionInStream",
        "kinesisClientConfig",
        "dynamoDBClientConfig",
        "cloudWatchClientConfig",
        "commonClientConfig",
        # KCL 1.9.3+'s proxy for its AWS clients: warned about (properties.py), since
        # botocore takes its proxy from HTTPS_PROXY instead.
        "http.proxyHost",
        "http.proxyPort",
    }
)
#: KCL 3.x table settings (``coordinatorState*``, ``workerMetrics*``) are ignored too.
IGNORED_PREFIXES = ("coordinatorState", "workerMetrics", "workerUtilization")

#: ``retrievalMode`` values, as the Java daemon's ``RetrievalMode`` enum (any case).
RETRIEVAL_MODES = ("FANOUT", "POLLING", "DEFAULT")
#: The Java daemon's ``PollingConfigBean`` properties: any of them set makes DEFAULT
#: mean POLLING (``RetrievalMode.decideForDefault``); numbers count when not 0.
POLLING_PROPERTIES = (
    "retryGetRecordsInSeconds",
    "maxGetRecordsThreadPool",
    "idleTimeBetweenReadsInMillis",
    "millisBehindLatestThresholdForReducedTps",
    "maxRecords",
)
