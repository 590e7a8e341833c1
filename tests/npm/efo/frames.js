// The AWS event-stream frames a SubscribeToShard answer is made of, encoded by
// @smithy/eventstream-codec (the AWS SDK for JavaScript v3's codec: prelude, headers,
// payload, both CRC32s). Payloads are JSON, as Kinesis's JSON protocol sends them.
'use strict'
const { EventStreamCodec } = require('@smithy/eventstream-codec')

const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => Buffer.from(text, 'utf8'),
)

function header(value) {
  return { type: 'string', value }
}

function encode(headers, payload) {
  return Buffer.from(codec.encode({ headers, body: Buffer.from(JSON.stringify(payload), 'utf8') }))
}

// The first frame of every subscription (botocore refuses a stream without it).
function initialResponse() {
  return encode({
    ':message-type': header('event'),
    ':event-type': header('initial-response'),
    ':content-type': header('application/json'),
  }, {})
}

// One SubscribeToShardEvent: Records, MillisBehindLatest, and ContinuationSequenceNumber
// (absent on a closed shard's last event, which carries ChildShards instead).
function shardEvent(event) {
  return encode({
    ':message-type': header('event'),
    ':event-type': header('SubscribeToShardEvent'),
    ':content-type': header('application/json'),
  }, event)
}

// An exception frame: the subscription's modelled error, which ends it.
function exception(type, message) {
  return encode({
    ':message-type': header('exception'),
    ':exception-type': header(type),
    ':content-type': header('application/json'),
  }, { message })
}

module.exports = { initialResponse, shardEvent, exception }
