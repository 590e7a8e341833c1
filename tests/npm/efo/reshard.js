// UpdateShardCount (UNIFORM_SCALING) carried out as Kinesis does: a series of SplitShard and
// MergeShards calls, so every new shard has its parents. The answer returns at once; the
// stream is UPDATING (in the front's DescribeStream answers) until the series is done.
//
// The plan: the N-1 inner boundaries of N uniform ranges (kinesalite's CreateStream
// arithmetic), each moved onto an open shard's boundary within 2^-40 of the hash space
// (halving 6 shards to 3 reuses boundaries that differ by rounding); split open shards at
// the boundaries they lack, then merge neighbours that no boundary separates. One call at
// a time, each waited out until kinesalite is ACTIVE again.
'use strict'
const { AwsError, requestedStream } = require('./backend')

const HASH_SPACE = 2n ** 128n
const TOLERANCE = HASH_SPACE >> 40n
const ACTIVE_POLL_MS = 20
const ACTIVE_TIMEOUT_MS = 60000

function startOf(shard) {
  return BigInt(shard.HashKeyRange.StartingHashKey)
}

function endOf(shard) {
  return BigInt(shard.HashKeyRange.EndingHashKey)
}

function targetBoundaries(openShards, target) {
  const width = HASH_SPACE / BigInt(target)
  const existing = openShards.map(startOf).filter((b) => b > 0n)
  const boundaries = []
  for (let i = 1; i < target; i++) {
    const ideal = width * BigInt(i)
    const near = existing.find((b) => (b > ideal ? b - ideal : ideal - b) <= TOLERANCE)
    boundaries.push(near === undefined ? ideal : near)
  }
  return boundaries
}

// The next call toward ``boundaries`` ({operation, params}), or null once they are the
// open shards' boundaries exactly.
function nextStep(openShards, boundaries) {
  const sorted = [...openShards].sort((a, b) => (startOf(a) < startOf(b) ? -1 : 1))
  for (const boundary of boundaries) {
    const shard = sorted.find((s) => startOf(s) < boundary && boundary <= endOf(s))
    if (shard) {
      return {
        operation: 'SplitShard',
        params: { ShardToSplit: shard.ShardId, NewStartingHashKey: boundary.toString() },
      }
    }
  }
  const kept = new Set(boundaries.map(String))
  for (let i = 0; i + 1 < sorted.length; i++) {
    if (!kept.has(startOf(sorted[i + 1]).toString())) {
      return {
        operation: 'MergeShards',
        params: { ShardToMerge: sorted[i].ShardId, AdjacentShardToMerge: sorted[i + 1].ShardId },
      }
    }
  }
  return null
}

class Resharder {
  constructor(backend) {
    this.backend = backend
    this.updating = new Set() // stream names with a series under way
    this.closed = false
  }

  isUpdating(streamName) {
    return this.updating.has(streamName)
  }

  async updateShardCount(params) {
    const streamName = requestedStream(params)
    const target = params.TargetShardCount
    if (params.ScalingType !== 'UNIFORM_SCALING') {
      throw new AwsError('InvalidArgumentException',
        `ScalingType must be UNIFORM_SCALING, got ${params.ScalingType}.`)
    }
    if (!Number.isInteger(target) || target < 1) {
      throw new AwsError('InvalidArgumentException', `TargetShardCount must be >= 1, got ${target}.`)
    }
    const { StreamDescriptionSummary: summary } = await this.backend.call('DescribeStreamSummary',
      { StreamName: streamName })
    if (this.updating.has(streamName) || summary.StreamStatus !== 'ACTIVE') {
      throw new AwsError('ResourceInUseException',
        `Stream ${streamName} is not ACTIVE, instead in state UPDATING.`)
    }
    const current = summary.OpenShardCount
    if (target > 2 * current || 2 * target < current) {
      throw new AwsError('LimitExceededException',
        `UpdateShardCount of ${streamName} from ${current} to ${target} shards: the target must be ` +
        'between half and double the current open shard count.')
    }
    this.updating.add(streamName)
    this._run(streamName, target)
      .catch((err) => {
        if (!this.closed) console.error(`efo: UpdateShardCount of ${streamName} stopped: ${err.message}`)
      })
      .finally(() => this.updating.delete(streamName))
    return {
      StreamName: streamName,
      CurrentShardCount: current,
      TargetShardCount: target,
      StreamARN: summary.StreamARN,
    }
  }

  async _run(streamName, target) {
    let open = await this._openShards(streamName)
    const boundaries = targetBoundaries(open, target)
    const maxSteps = 4 * (open.length + target)
    for (let steps = 0; !this.closed; steps++) {
      const step = nextStep(open, boundaries)
      if (!step) return
      if (steps >= maxSteps) throw new Error(`no plan after ${steps} steps (a bug in reshard.js)`)
      await this.backend.call(step.operation, { StreamName: streamName, ...step.params })
      await this._waitActive(streamName)
      open = await this._openShards(streamName)
    }
  }

  async _openShards(streamName) {
    const { Shards: shards } = await this.backend.call('ListShards', { StreamName: streamName })
    return shards.filter((s) => !s.SequenceNumberRange.EndingSequenceNumber)
  }

  async _waitActive(streamName) {
    const deadline = Date.now() + ACTIVE_TIMEOUT_MS
    for (;;) {
      const { StreamDescriptionSummary: summary } = await this.backend.call(
        'DescribeStreamSummary', { StreamName: streamName })
      if (summary.StreamStatus === 'ACTIVE') return
      if (Date.now() > deadline || this.closed) {
        throw new Error(`${streamName} still ${summary.StreamStatus} after ${ACTIVE_TIMEOUT_MS} ms`)
      }
      await new Promise((resolve) => setTimeout(resolve, ACTIVE_POLL_MS))
    }
  }

  close() {
    this.closed = true
  }
}

module.exports = { Resharder, targetBoundaries, nextStep }
