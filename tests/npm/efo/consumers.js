// Registered stream consumers, as Kinesis keeps them: CREATING, then ACTIVE after a delay;
// DELETING on deregistration, then gone. At most 20 a stream and 5 CREATING at once
// (LimitExceededException), a name once a stream (ResourceInUseException).
'use strict'
const { AwsError } = require('./backend')

const MAX_CONSUMERS = 20
const MAX_CREATING = 5
const MAX_RESULTS = 100 // ListStreamConsumers' default page

const Status = Object.freeze({ CREATING: 'CREATING', ACTIVE: 'ACTIVE', DELETING: 'DELETING' })

class Consumers {
  // ``onDeleting(consumer)`` is told when a consumer starts DELETING (its subscriptions end).
  constructor({ activateMs, deleteMs, onDeleting }) {
    this.activateMs = activateMs
    this.deleteMs = deleteMs
    this.onDeleting = onDeleting
    this.byArn = new Map()
    this.timers = new Set()
  }

  register(streamArn, name) {
    if (!name) throw new AwsError('InvalidArgumentException', 'ConsumerName is required.')
    const ofStream = this.list(streamArn)
    if (ofStream.some((c) => c.name === name)) {
      throw new AwsError('ResourceInUseException',
        `Consumer ${name} under stream ${streamArn} already exists.`)
    }
    if (ofStream.length >= MAX_CONSUMERS) {
      throw new AwsError('LimitExceededException',
        `Stream ${streamArn} has ${ofStream.length} consumers, the limit is ${MAX_CONSUMERS}.`)
    }
    if (ofStream.filter((c) => c.status === Status.CREATING).length >= MAX_CREATING) {
      throw new AwsError('LimitExceededException',
        `Stream ${streamArn} has ${MAX_CREATING} consumers in CREATING status.`)
    }
    const createdMs = Date.now()
    const consumer = {
      name,
      arn: `${streamArn}/consumer/${name}:${Math.floor(createdMs / 1000)}`,
      streamArn,
      status: Status.CREATING,
      createdS: createdMs / 1000,
    }
    this.byArn.set(consumer.arn, consumer)
    this._later(this.activateMs, () => {
      if (consumer.status === Status.CREATING) consumer.status = Status.ACTIVE
    })
    return consumer
  }

  // By ConsumerARN, or by StreamARN and ConsumerName, as the API allows.
  find(params) {
    let consumer
    if (params.ConsumerARN) {
      consumer = this.byArn.get(params.ConsumerARN)
    } else if (params.StreamARN && params.ConsumerName) {
      consumer = this.list(params.StreamARN).find((c) => c.name === params.ConsumerName)
    } else {
      throw new AwsError('InvalidArgumentException',
        'Either ConsumerARN or both StreamARN and ConsumerName should be provided.')
    }
    if (!consumer) {
      const which = params.ConsumerARN || `${params.ConsumerName} under stream ${params.StreamARN}`
      throw new AwsError('ResourceNotFoundException', `Consumer ${which} not found.`)
    }
    return consumer
  }

  list(streamArn) {
    return [...this.byArn.values()].filter((c) => c.streamArn === streamArn)
  }

  // One page of a stream's consumers; NextToken is the offset of the next page.
  page(streamArn, maxResults, nextToken) {
    const size = maxResults || MAX_RESULTS
    if (!(size >= 1 && size <= 10000)) {
      throw new AwsError('InvalidArgumentException', `MaxResults must be 1-10000, got ${maxResults}`)
    }
    const start = nextToken ? Number(Buffer.from(nextToken, 'base64').toString('utf8')) : 0
    if (!Number.isInteger(start) || start < 0) {
      throw new AwsError('InvalidArgumentException', `NextToken ${nextToken} is not valid.`)
    }
    const all = this.list(streamArn)
    const page = all.slice(start, start + size)
    const next = start + size < all.length
      ? Buffer.from(String(start + size)).toString('base64') : undefined
    return { consumers: page, nextToken: next }
  }

  deregister(params) {
    const consumer = this.find(params)
    if (consumer.status !== Status.DELETING) {
      consumer.status = Status.DELETING
      this.onDeleting(consumer)
      this._later(this.deleteMs, () => this.byArn.delete(consumer.arn))
    }
    return consumer
  }

  // A deleted stream takes its consumers with it.
  dropStream(streamArn) {
    for (const consumer of this.list(streamArn)) {
      consumer.status = Status.DELETING
      this.onDeleting(consumer)
      this.byArn.delete(consumer.arn)
    }
  }

  _later(ms, action) {
    const timer = setTimeout(() => {
      this.timers.delete(timer)
      action()
    }, ms)
    this.timers.add(timer)
  }

  close() {
    for (const timer of this.timers) clearTimeout(timer)
    this.timers.clear()
  }
}

// A consumer as Describe/List/Register answer it (``withStream``: DescribeStreamConsumer's).
function describe(consumer, withStream = false) {
  const out = {
    ConsumerName: consumer.name,
    ConsumerARN: consumer.arn,
    ConsumerStatus: consumer.status,
    ConsumerCreationTimestamp: consumer.createdS,
  }
  if (withStream) out.StreamARN = consumer.streamArn
  return out
}

module.exports = { Consumers, Status, describe }
