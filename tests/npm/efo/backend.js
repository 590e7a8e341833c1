// kinesalite in this process on an internal port, and the one way the front talks to it:
// Kinesis JSON calls over HTTP, as any SDK makes them. kinesalite checks that a request is
// signed, not the signature, so a fixed Authorization header is enough.
'use strict'
const http = require('http')
const kinesalite = require('kinesalite')

const TARGET_PREFIX = 'Kinesis_20131202.'
const JSON_TYPE = 'application/x-amz-json-1.1'
const AUTHORIZATION = 'AWS4-HMAC-SHA256 Credential=efo/20260101/us-east-1/kinesis/aws4_request, ' +
  'SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=efo'

// An AWS error as the front answers it: HTTP status, __type and message (botocore reads both).
class AwsError extends Error {
  constructor(type, message, statusCode = 400) {
    super(message)
    this.type = type
    this.statusCode = statusCode
  }

  get body() {
    return { __type: this.type, message: this.message }
  }
}

class Backend {
  constructor(options) {
    this.server = kinesalite(options)
    // Keep-alive: a subscription polls GetRecords several times a second.
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
    this.port = null
  }

  listen() {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject)
      this.server.listen(0, '127.0.0.1', () => {
        this.port = this.server.address().port
        resolve()
      })
    })
  }

  // A raw request passed on unchanged; resolves to {statusCode, headers, body (Buffer)}.
  forward(headers, body) {
    const sent = { ...headers, 'content-length': String(body.length) }
    delete sent.host
    delete sent.connection
    return this._request(sent, body)
  }

  // One Kinesis call; resolves to the parsed answer or rejects with an AwsError.
  async call(operation, params) {
    const body = Buffer.from(JSON.stringify(params))
    const answer = await this._request({
      'content-type': JSON_TYPE,
      'content-length': String(body.length),
      'x-amz-target': TARGET_PREFIX + operation,
      'x-amz-date': new Date().toISOString().replace(/[-:]|\.\d+/g, ''),
      authorization: AUTHORIZATION,
    }, body)
    const parsed = answer.body.length ? JSON.parse(answer.body.toString('utf8')) : {}
    if (answer.statusCode !== 200) {
      throw new AwsError(parsed.__type || 'InternalFailure', parsed.message || `${operation} failed`,
        answer.statusCode)
    }
    return parsed
  }

  _request(headers, body) {
    return new Promise((resolve, reject) => {
      const request = http.request({
        host: '127.0.0.1', port: this.port, method: 'POST', path: '/', headers, agent: this.agent,
      }, (response) => {
        const chunks = []
        response.on('data', (chunk) => chunks.push(chunk))
        response.on('end', () => resolve({
          statusCode: response.statusCode, headers: response.headers, body: Buffer.concat(chunks),
        }))
        response.on('error', reject)
      })
      request.on('error', reject)
      request.end(body)
    })
  }

  close() {
    this.agent.destroy()
    this.server.close(() => {})
  }
}

// The stream name in a stream ARN (arn:aws:kinesis:<region>:<account>:stream/<name>).
function streamNameOf(streamArn) {
  const match = /^arn:[^:]+:kinesis:[^:]*:[^:]*:stream\/([a-zA-Z0-9_.-]+)$/.exec(streamArn || '')
  if (!match) throw new AwsError('InvalidArgumentException', `StreamARN ${streamArn} is not a stream ARN`)
  return match[1]
}

// StreamName, or the name in StreamARN, as the request gives it.
function requestedStream(params) {
  if (params.StreamName) return params.StreamName
  if (params.StreamARN) return streamNameOf(params.StreamARN)
  throw new AwsError('InvalidArgumentException', 'Either StreamName or StreamARN should be provided.')
}

module.exports = { Backend, AwsError, streamNameOf, requestedStream }
