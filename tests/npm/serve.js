// Start kinesalite, dynalite or kinesalite-efo (kinesalite behind the enhanced fan-out front
// in efo/) in memory on 127.0.0.1, on the given port (0 = any free one); kinesalite-efo takes
// its options as a JSON object (efo/server.js's DEFAULTS names them).
// Prints the ready line kinesis_dstream.local expects once bound; exits when stdin closes, so the server never
// outlives the test process that started it.
'use strict'
const [name, port = '0', efoOptions = '{}'] = process.argv.slice(2)
const SERVERS = {
  // Fast state changes: tests wait for ACTIVE, and 500 ms defaults only slow them down.
  kinesalite: () => require('kinesalite')(
    { createStreamMs: 50, deleteStreamMs: 50, updateStreamMs: 50, shardLimit: 100 }),
  dynalite: () => require('dynalite')({ createTableMs: 50, deleteTableMs: 50, updateTableMs: 50 }),
  'kinesalite-efo': () => require('./efo/server').createEfoServer(JSON.parse(efoOptions)),
}
if (!(name in SERVERS)) {
  console.error(`usage: node serve.js ${Object.keys(SERVERS).join('|')} [port] [efo options JSON]`)
  process.exit(2)
}
const server = SERVERS[name]()
// Idle keep-alive connections stay open, as a Kinesis or DynamoDB endpoint keeps them far
// longer than Node's 5 s default: at 5 s a client reusing a pooled connection just as the
// server closes it gets a reset, and the tests' own clients have botocore's retries off
// (the library's clients retry it). A loaded run failed once on that race.
server.keepAliveTimeout = 0
server.listen(Number(port), '127.0.0.1', () => {
  process.stdout.write(`KINESIS_DSTREAM_LOCAL_AWS_READY ${server.address().port}\n`)
})
server.on('error', (err) => {
  console.error(`${name}: ${err.message}`)
  process.exit(1)
})
process.stdin.resume()
process.stdin.on('end', () => process.exit(0))
process.stdin.on('close', () => process.exit(0))
