// SubscribeToShard: who may subscribe, where the subscription starts, and the live ones.
//
// Kinesis's rule: a call within ``resubscribeMs`` (5 s) of the last successful call for the
// same consumer and shard is refused with ResourceInUseException, whether that subscription
// is still open or not; a call after that takes over, and the open one ends with a
// ResourceInUseException exception frame. Errors before the stream starts are HTTP errors.
'use strict'
const { randomUUID } = require('crypto')
const { AwsError, streamNameOf } = require('./backend')
const { Status } = require('./consumers')
const { Subscription } = require('./subscription')

const POSITIONS = new Set(['TRIM_HORIZON', 'LATEST', 'AT_TIMESTAMP', 'AT_SEQUENCE_NUMBER',
  'AFTER_SEQUENCE_NUMBER'])

class Subscriptions {
  constructor({ backend, consumers, options }) {
    this.backend = backend
    this.consumers = consumers
    this.options = options
    this.live = new Map() // "consumerArn shardId" -> Subscription
    this.lastSuccessMs = new Map() // "consumerArn shardId" -> time of the last successful call
  }

  // Answer a SubscribeToShard call on ``res``: an HTTP error, or the event stream.
  async subscribe(params, res) {
    const consumer = this.consumers.find({ ConsumerARN: params.ConsumerARN || '' })
    if (consumer.status !== Status.ACTIVE) {
      throw new AwsError('ResourceInUseException',
        `Consumer ${consumer.arn} is not in ACTIVE status (${consumer.status}).`)
    }
    const streamName = streamNameOf(consumer.streamArn)
    const shardId = params.ShardId
    const { Shards: shards } = await this.backend.call('ListShards', { StreamName: streamName })
    if (!shards.some((s) => s.ShardId === shardId)) {
      throw new AwsError('ResourceNotFoundException',
        `Shard ${shardId} in stream ${streamName} does not exist.`)
    }
    const { iterator, skipBeforeS } = await this._start(streamName, shardId,
      params.StartingPosition || {})
    if (this.consumers.byArn.get(consumer.arn) !== consumer || consumer.status !== Status.ACTIVE) {
      throw new AwsError('ResourceNotFoundException', `Consumer ${consumer.arn} not found.`)
    }
    // The rule, checked and recorded with no await between: two calls at once, one wins.
    const key = `${consumer.arn} ${shardId}`
    const last = this.lastSuccessMs.get(key)
    if (last !== undefined && Date.now() - last < this.options.resubscribeMs) {
      throw new AwsError('ResourceInUseException',
        `Another active subscription exists for this consumer: ${consumer.arn} (shard ${shardId}).`)
    }
    this.lastSuccessMs.set(key, Date.now())
    const previous = this.live.get(key)
    if (previous) {
      previous.fail('ResourceInUseException',
        `Another subscription of ${consumer.arn} to ${shardId} took this one over.`)
    }
    res.writeHead(200, {
      'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': randomUUID(),
    })
    const subscription = new Subscription({
      backend: this.backend, res, consumerArn: consumer.arn, streamName, shardId, iterator,
      skipBeforeS, options: this.options,
      onEnd: (ended) => {
        if (this.live.get(key) === ended) this.live.delete(key)
      },
    })
    this.live.set(key, subscription)
    subscription.start()
  }

  // A kinesalite iterator for StartingPosition (AT_TIMESTAMP: from the trim horizon,
  // skipping records that arrived before the timestamp).
  async _start(streamName, shardId, position) {
    if (!POSITIONS.has(position.Type)) {
      throw new AwsError('InvalidArgumentException',
        `StartingPosition.Type must be one of ${[...POSITIONS].join(', ')}, got ${position.Type}.`)
    }
    const byNumber = position.Type.endsWith('_SEQUENCE_NUMBER')
    if (byNumber !== (position.SequenceNumber != null)) {
      throw new AwsError('InvalidArgumentException', byNumber
        ? `StartingPosition ${position.Type} needs a SequenceNumber.`
        : `StartingPosition ${position.Type} takes no SequenceNumber.`)
    }
    if ((position.Type === 'AT_TIMESTAMP') !== (position.Timestamp != null)) {
      throw new AwsError('InvalidArgumentException', position.Type === 'AT_TIMESTAMP'
        ? 'StartingPosition AT_TIMESTAMP needs a Timestamp.'
        : `StartingPosition ${position.Type} takes no Timestamp.`)
    }
    const atTimestamp = position.Type === 'AT_TIMESTAMP'
    const request = {
      StreamName: streamName,
      ShardId: shardId,
      ShardIteratorType: atTimestamp ? 'TRIM_HORIZON' : position.Type,
    }
    if (byNumber) request.StartingSequenceNumber = position.SequenceNumber
    const { ShardIterator: iterator } = await this.backend.call('GetShardIterator', request)
    return { iterator, skipBeforeS: atTimestamp ? Number(position.Timestamp) : null }
  }

  // End every live subscription of a consumer that is being deleted.
  consumerDeleting(consumer) {
    for (const subscription of [...this.live.values()]) {
      if (subscription.consumerArn === consumer.arn) {
        subscription.fail('ResourceNotFoundException',
          `Consumer ${consumer.arn} is being deleted (${consumer.status}).`)
      }
    }
  }

  close() {
    for (const subscription of [...this.live.values()]) subscription.finish()
  }
}

module.exports = { Subscriptions }
