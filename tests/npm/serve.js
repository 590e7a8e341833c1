// Start kinesalite or dynalite in memory on 127.0.0.1, on the given port (0 = any free one).
// Prints the ready line kinesis_dstream.local expects once bound; exits when stdin closes, so the server never
// outlives the test process that started it.
'use strict'
const [name, port = '0'] = process.argv.slice(2)
if (name !== 'kinesalite' && name !== 'dynalite') {
  console.error('usage: node serve.js kinesalite|dynalite [port]')
  process.exit(2)
}
// Fast state changes: tests wait for ACTIVE, and 500 ms defaults only slow them down.
const options = name === 'kinesalite'
  ? { createStreamMs: 50, deleteStreamMs: 50, updateStreamMs: 50, shardLimit: 100 }
  : { createTableMs: 50, deleteTableMs: 50, updateTableMs: 50 }
const server = require(name)(options)
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
