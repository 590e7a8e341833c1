// One live subscription: a shard's records read from kinesalite (GetRecords every
// ``pollMs``) and pushed as SubscribeToShardEvents over the open HTTP answer.
//
// - Records are read ahead into a buffer (up to ``readAheadRecords``) and sent in events of
//   at most ``maxEventBytes`` of data; MillisBehindLatest is how far the event's last record
//   arrived before the newest record read (at least 1 while records remain), 0 when the
//   event leaves nothing unsent.
// - ContinuationSequenceNumber: the last record sent while records remain; else the number
//   just before kinesalite's iterator (see position.js), which advances while idle.
// - The first event goes out at once; an empty one at least every ``heartbeatMs``.
// - A closed shard, once drained (kinesalite gives no NextShardIterator), gets one last
//   event without ContinuationSequenceNumber and with ChildShards; then the answer ends.
// - After ``lifetimeMs`` the answer ends cleanly, as Kinesis's 5 minutes do.
'use strict'
const frames = require('./frames')
const { continuationBefore } = require('./position')

const GET_RECORDS_LIMIT = 10000
// The exceptions SubscribeToShard's event stream models; any other error is sent as
// InternalFailureException.
const STREAM_EXCEPTIONS = new Set(['ResourceNotFoundException', 'ResourceInUseException',
  'InternalFailureException'])

class Subscription {
  constructor({ backend, res, consumerArn, streamName, shardId, iterator, skipBeforeS, options,
    onEnd }) {
    this.backend = backend
    this.res = res
    this.consumerArn = consumerArn
    this.streamName = streamName
    this.shardId = shardId
    this.iterator = iterator
    this.skipBeforeS = skipBeforeS // AT_TIMESTAMP: records that arrived before it are skipped
    this.options = options
    this.onEnd = onEnd
    this.buffer = []
    this.lastSent = null // the last record sent
    this.eventsSent = 0
    this.lastEventMs = 0
    this.ended = false
    this.busy = false
    this.timer = null
    this.expiry = null
  }

  start() {
    this.res.on('close', () => this._stop())
    this._write(frames.initialResponse())
    this.expiry = setTimeout(() => this.finish(), this.options.lifetimeMs)
    this._schedule(0)
  }

  // End the answer cleanly (no exception frame): expiry, a shard's end.
  finish() {
    if (this.ended) return
    this._stop()
    this.res.end()
  }

  // End with an exception frame: a takeover, a deregistered consumer, a stream gone.
  fail(type, message) {
    if (this.ended) return
    this._stop()
    this.res.end(frames.exception(STREAM_EXCEPTIONS.has(type) ? type : 'InternalFailureException',
      message))
  }

  _stop() {
    if (this.ended) return
    this.ended = true
    clearTimeout(this.timer)
    clearTimeout(this.expiry)
    this.onEnd(this)
  }

  _schedule(ms) {
    if (!this.ended) this.timer = setTimeout(() => this._tick(), ms)
  }

  async _tick() {
    if (this.ended || this.busy) return
    this.busy = true
    try {
      await this._fill()
      if (!this.ended) this._push()
    } catch (err) {
      this.fail(err.type || 'InternalFailureException',
        `reading ${this.shardId} of ${this.streamName}: ${err.message}`)
    } finally {
      this.busy = false
    }
  }

  // Read from kinesalite until caught up, the read-ahead is full, or the shard ends.
  async _fill() {
    let drained = false
    while (!drained && this.iterator && this.buffer.length < this.options.readAheadRecords) {
      const page = await this.backend.call('GetRecords',
        { ShardIterator: this.iterator, Limit: GET_RECORDS_LIMIT })
      if (this.ended) return
      this.iterator = page.NextShardIterator // absent: a closed shard read to its end
      drained = page.Records.length < GET_RECORDS_LIMIT
      for (const record of page.Records) {
        if (this.skipBeforeS != null && record.ApproximateArrivalTimestamp < this.skipBeforeS) continue
        this.skipBeforeS = null // records are in arrival order: the rest are all at or after
        this.buffer.push(record)
      }
    }
  }

  // Send what the buffer holds (backpressure permitting), a heartbeat, or the shard's end.
  _push() {
    while (this.buffer.length) {
      if (!this._send(this._nextEvent())) return // resumes on 'drain'
    }
    if (!this.iterator) {
      this._sendEnd()
      return
    }
    const now = Date.now()
    if (this.eventsSent === 0 || now - this.lastEventMs >= this.options.heartbeatMs) {
      if (!this._send(this._emptyEvent())) return
    }
    this._schedule(this.options.pollMs)
  }

  _nextEvent() {
    let bytes = 0
    let count = 0
    while (count < this.buffer.length) {
      const size = Math.ceil(this.buffer[count].Data.length * 3 / 4)
      if (count > 0 && bytes + size > this.options.maxEventBytes) break
      bytes += size
      count += 1
    }
    const records = this.buffer.splice(0, count)
    this.lastSent = records[records.length - 1]
    const newest = this.buffer.length ? this.buffer[this.buffer.length - 1] : null
    return {
      Records: records.map(asEventRecord),
      ContinuationSequenceNumber: newest ? this.lastSent.SequenceNumber : this._continuation(),
      MillisBehindLatest: newest ? millisBetween(this.lastSent, newest) : 0,
    }
  }

  _emptyEvent() {
    return { Records: [], ContinuationSequenceNumber: this._continuation(), MillisBehindLatest: 0 }
  }

  _continuation() {
    return this.iterator ? continuationBefore(this.iterator) : this.lastSent.SequenceNumber
  }

  async _sendEnd() {
    try {
      const children = await this._children()
      if (this.ended) return
      this._send({ Records: [], MillisBehindLatest: 0, ChildShards: children })
      this.finish()
    } catch (err) {
      this.fail(err.type || 'InternalFailureException', `listing the children of ${this.shardId}: ${err.message}`)
    }
  }

  // The shards whose parent (or adjacent parent) this one is, as Kinesis's ChildShards.
  async _children() {
    const { Shards: shards } = await this.backend.call('ListShards', { StreamName: this.streamName })
    return shards
      .filter((s) => s.ParentShardId === this.shardId || s.AdjacentParentShardId === this.shardId)
      .map((s) => ({
        ShardId: s.ShardId,
        ParentShards: [s.ParentShardId, s.AdjacentParentShardId].filter(Boolean),
        HashKeyRange: s.HashKeyRange,
      }))
  }

  _send(event) {
    this.eventsSent += 1
    this.lastEventMs = Date.now()
    return this._write(frames.shardEvent(event))
  }

  // Write a frame; false when the socket is full (the next tick waits for 'drain').
  _write(frame) {
    if (this.ended) return false
    if (this.res.write(frame)) return true
    this.res.once('drain', () => this._schedule(0))
    return false
  }
}

function asEventRecord(record) {
  const out = {
    SequenceNumber: record.SequenceNumber,
    ApproximateArrivalTimestamp: record.ApproximateArrivalTimestamp,
    Data: record.Data,
    PartitionKey: record.PartitionKey,
  }
  if (record.EncryptionType) out.EncryptionType = record.EncryptionType
  return out
}

function millisBetween(older, newer) {
  const ms = Math.round((newer.ApproximateArrivalTimestamp - older.ApproximateArrivalTimestamp) * 1000)
  return Math.max(1, ms) // behind: never 0, which means caught up
}

module.exports = { Subscription }
