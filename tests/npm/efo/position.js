// Where a subscription stands in a shard, in kinesalite's own encoding (its db module).
//
// A shard iterator of kinesalite carries the sequence number its next GetRecords starts AT
// (inclusive); after records it is the last one's number with its time field one second
// later, and an empty read moves the time field to now (so an idle reader advances, as
// Kinesis's continuation numbers do). AFTER_SEQUENCE_NUMBER s starts at s with its time
// field one second later. So the continuation number of a position p is p with its time
// field one second earlier: AFTER it starts exactly at p. After records that is the last
// record's own number.
'use strict'
const crypto = require('crypto')
const db = require('kinesalite/db')

// The sequence number a kinesalite shard iterator starts at.
function iteratorSequence(iterator) {
  const buffer = Buffer.from(iterator, 'base64')
  const decipher = crypto.createDecipheriv('aes-256-cbc', db.ITERATOR_PWD_KEY, db.ITERATOR_PWD_IV)
  const plain = Buffer.concat([decipher.update(buffer.slice(8)), decipher.final()]).toString('utf8')
  return plain.split('/')[3]
}

// The continuation number for a subscription whose next record is at or after ``iterator``.
function continuationBefore(iterator) {
  const position = db.parseSequence(iteratorSequence(iterator))
  return db.stringifySequence({ ...position, seqTime: position.seqTime - 1000 })
}

module.exports = { continuationBefore, iteratorSequence }
