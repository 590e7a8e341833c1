// A Kinesis server for enhanced fan-out tests: kinesalite (correct SplitShard and
// MergeShards, closed parents readable) behind a front that answers what kinesalite lacks.
//
// Answered here: RegisterStreamConsumer, DescribeStreamConsumer, ListStreamConsumers,
// DeregisterStreamConsumer, SubscribeToShard (consumers.js, subscriptions.js) and
// UpdateShardCount as a series of splits and merges (reshard.js). DescribeStream and
// DescribeStreamSummary are kinesalite's answers with the stream UPDATING during such a
// series (and the consumer count); SplitShard, MergeShards and DeleteStream are refused
// as Kinesis refuses them (UPDATING; registered consumers). Everything else is passed to
// kinesalite unchanged. Only the JSON protocol is answered here (boto3, the JS SDK).
'use strict'
const http = require('http')
const { randomUUID } = require('crypto')
const { Backend, AwsError, requestedStream } = require('./backend')
const { Consumers, describe } = require('./consumers')
const { Resharder } = require('./reshard')
const { Subscriptions } = require('./subscriptions')

const DEFAULTS = Object.freeze({
  lifetimeMs: 300000, // a subscription's life (Kinesis: 5 minutes)
  resubscribeMs: 5000, // no new subscription within this of the last (Kinesis: 5 s)
  consumerActivateMs: 200, // CREATING -> ACTIVE
  consumerDeleteMs: 200, // DELETING -> gone
  pollMs: 150, // GetRecords on kinesalite, per subscription
  heartbeatMs: 5000, // an empty event at least this often
  maxEventBytes: 1024 * 1024, // record data in one event
  readAheadRecords: 20000,
  shardLimit: 1000, // kinesalite's open shards across streams
  reshardStepMs: 200, // kinesalite's time for one SplitShard or MergeShards (UPDATING)
})
const TARGET_PREFIX = 'Kinesis_20131202.'
const JSON_TYPES = new Set(['application/x-amz-json-1.1', 'application/x-amz-json-1.0'])

function createEfoServer(given = {}) {
  const unknown = Object.keys(given).filter((key) => !(key in DEFAULTS))
  if (unknown.length) {
    throw new Error(`unknown option ${unknown.join(', ')}; known: ${Object.keys(DEFAULTS).join(', ')}`)
  }
  const options = { ...DEFAULTS, ...given }
  const backend = new Backend({
    createStreamMs: 50,
    deleteStreamMs: 50,
    updateStreamMs: options.reshardStepMs,
    shardLimit: options.shardLimit,
  })
  let subscriptions = null
  const consumers = new Consumers({
    activateMs: options.consumerActivateMs,
    deleteMs: options.consumerDeleteMs,
    onDeleting: (consumer) => subscriptions.consumerDeleting(consumer),
  })
  subscriptions = new Subscriptions({ backend, consumers, options })
  const resharder = new Resharder(backend)

  async function streamArnOf(streamArn) {
    const name = requestedStream({ StreamARN: streamArn })
    const { StreamDescriptionSummary: summary } = await backend.call('DescribeStreamSummary',
      { StreamName: name })
    if (summary.StreamARN !== streamArn) {
      throw new AwsError('ResourceNotFoundException', `Stream ${streamArn} not found.`)
    }
    return streamArn
  }

  // The operations answered here: params in, the answer's JSON out (or a thrown AwsError).
  const answered = {
    async RegisterStreamConsumer(params) {
      const consumer = consumers.register(await streamArnOf(params.StreamARN), params.ConsumerName)
      return { Consumer: describe(consumer) }
    },
    async DescribeStreamConsumer(params) {
      return { ConsumerDescription: describe(consumers.find(params), true) }
    },
    async ListStreamConsumers(params) {
      const page = consumers.page(await streamArnOf(params.StreamARN), params.MaxResults,
        params.NextToken)
      const answer = { Consumers: page.consumers.map((c) => describe(c)) }
      if (page.nextToken) answer.NextToken = page.nextToken
      return answer
    },
    async DeregisterStreamConsumer(params) {
      consumers.deregister(params)
      return {}
    },
    async UpdateShardCount(params) {
      return resharder.updateShardCount(params)
    },
  }

  // Checked here, then passed on: null to pass the request on, else the refusal.
  const guarded = {
    SplitShard: refuseWhileUpdating,
    MergeShards: refuseWhileUpdating,
    async DeleteStream(params) {
      const { StreamDescriptionSummary: summary } = await backend.call('DescribeStreamSummary',
        { StreamName: requestedStream(params) })
      const registered = consumers.list(summary.StreamARN)
      if (registered.length && !params.EnforceConsumerDeletion) {
        throw new AwsError('ResourceInUseException',
          `Stream ${summary.StreamName} has ${registered.length} registered consumers; ` +
          'deregister them or set EnforceConsumerDeletion.')
      }
      consumers.dropStream(summary.StreamARN)
    },
  }

  function refuseWhileUpdating(params) {
    const name = requestedStream(params)
    if (resharder.isUpdating(name)) {
      throw new AwsError('ResourceInUseException',
        `Stream ${name} is not ACTIVE, instead in state UPDATING.`)
    }
  }

  // kinesalite's answers, with the stream UPDATING while a series runs on it.
  const rewritten = {
    DescribeStream(answer) {
      const description = answer.StreamDescription
      if (resharder.isUpdating(description.StreamName)) description.StreamStatus = 'UPDATING'
    },
    DescribeStreamSummary(answer) {
      const summary = answer.StreamDescriptionSummary
      if (resharder.isUpdating(summary.StreamName)) summary.StreamStatus = 'UPDATING'
      summary.ConsumerCount = consumers.list(summary.StreamARN).length
    },
  }

  async function handle(req, res, body) {
    const operation = (req.headers['x-amz-target'] || '').startsWith(TARGET_PREFIX)
      ? req.headers['x-amz-target'].slice(TARGET_PREFIX.length) : ''
    const isJson = JSON_TYPES.has((req.headers['content-type'] || '').split(';')[0].trim())
    const ours = operation === 'SubscribeToShard' || operation in answered ||
      operation in guarded || operation in rewritten
    if (!ours || !isJson) return passOn(req, res, body, null)
    let params
    try {
      params = JSON.parse(body.toString('utf8') || '{}')
    } catch (err) {
      throw new AwsError('SerializationException', `${operation}: the body is not JSON`)
    }
    if (operation === 'SubscribeToShard') return subscriptions.subscribe(params, res)
    if (operation in answered) return sendJson(res, 200, await answered[operation](params))
    if (operation in guarded) await guarded[operation](params)
    return passOn(req, res, body, rewritten[operation])
  }

  async function passOn(req, res, body, rewrite) {
    const answer = await backend.forward(req.headers, body)
    if (rewrite && answer.statusCode === 200) {
      const parsed = JSON.parse(answer.body.toString('utf8'))
      rewrite(parsed)
      return sendJson(res, 200, parsed)
    }
    const headers = { ...answer.headers }
    delete headers.connection
    delete headers['keep-alive']
    delete headers['transfer-encoding']
    headers['content-length'] = String(answer.body.length)
    res.writeHead(answer.statusCode, headers)
    res.end(answer.body)
  }

  const front = http.createServer((req, res) => {
    const chunks = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks)).catch((err) => {
        if (!(err instanceof AwsError)) {
          console.error(`efo: ${req.headers['x-amz-target']}: ${err.stack || err}`)
          err = new AwsError('InternalFailure', String(err.message || err), 500)
        }
        if (res.headersSent) res.destroy()
        else sendJson(res, err.statusCode, err.body)
      })
    })
  })

  // Listening starts kinesalite first; closing stops subscriptions, series and kinesalite.
  const listen = front.listen
  front.listen = (...args) => {
    backend.listen().then(() => listen.apply(front, args), (err) => front.emit('error', err))
    return front
  }
  const close = front.close
  front.close = (callback) => {
    subscriptions.close()
    resharder.close()
    consumers.close()
    backend.close()
    return close.call(front, callback)
  }
  return front
}

function sendJson(res, statusCode, data) {
  const body = Buffer.from(JSON.stringify(data), 'utf8')
  res.writeHead(statusCode, {
    'content-type': 'application/x-amz-json-1.1',
    'content-length': String(body.length),
    'x-amzn-requestid': randomUUID(),
  })
  res.end(body)
}

module.exports = { createEfoServer, DEFAULTS }
