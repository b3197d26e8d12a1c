// The local Kinesis of the tests: kinesalite (from npm, on the in-memory `memdown` store) on a
// free port of 127.0.0.1; prints the port on stdout, then serves until it is killed.
// test/kinesis/globalSetup.ts starts it as a child process.
//
// One fix to kinesalite 3.3.3 is applied before it loads: its GetShardIterator of type
// AT_TIMESTAMP never answers when no record of the shard arrived at or after the time (its
// lookup of the first such record has no case for "none"). Kinesis then answers with an
// iterator for the next record to arrive, which is what a LATEST iterator is at that moment,
// so such a request is answered as LATEST. Every other request goes to kinesalite unchanged.
"use strict"
const file = require.resolve("kinesalite/actions/getShardIterator.js")
const original = require(file)
const db = require("kinesalite/db/index.js")

function getShardIterator(store, data, cb) {
  if (data.ShardIteratorType !== "AT_TIMESTAMP" || data.Timestamp == null) return original(store, data, cb)
  // Kinesis checks the time against its clock first: the original does that check.
  if (data.Timestamp * 1000 > Date.now()) return original(store, data, cb)
  let shardIx
  try {
    shardIx = db.resolveShardId(data.ShardId).shardIx
  } catch {
    return original(store, data, cb)
  }
  let found = false
  store
    .getStreamDb(data.StreamName)
    .createReadStream({ gt: db.shardIxToHex(shardIx), lt: db.shardIxToHex(shardIx + 1) })
    .on("data", (item) => {
      if (item.value.ApproximateArrivalTimestamp >= data.Timestamp) found = true
    })
    .on("error", (e) => cb(e))
    .on("end", () => {
      if (found) return original(store, data, cb)
      const { Timestamp: _, ...rest } = data
      original(store, { ...rest, ShardIteratorType: "LATEST" }, cb)
    })
}
require.cache[file].exports = getShardIterator

const kinesalite = require("kinesalite")
// Streams become ACTIVE at once, so tests wait only for the calls themselves.
const server = kinesalite({ createStreamMs: 0, deleteStreamMs: 0, updateStreamMs: 0, shardLimit: 1000 })
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${server.address().port}\n`)
})
