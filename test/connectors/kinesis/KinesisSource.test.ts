/**
 * The `kinesis` source against a local Kinesis (kinesalite, started by
 * test/kinesis/globalSetup.ts; no mocks): records written with PutRecords read batch by batch,
 * the offsets logged per shard, replay of a logged range, restarts from the checkpoint with a
 * file sink (no loss, no duplicates, also when the last batch was logged but not committed),
 * shard splits and merges during the query (parents read to their end before their children,
 * every record once, each shard's order kept), the initial positions, and typed failures.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { F, type Row, Session, Trigger } from "../../../mod.ts"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"
import { CheckAnswer, Execute, StartStream, StopStream, testStream } from "../../../structured/testing.ts"
import { ConnectorError } from "../../../core/Errors.ts"
import type { MicroBatchSource } from "../../../core/Streaming.ts"
import { KinesisSourceFormat, kinesisSchema } from "../../../connectors/kinesis/mod.ts"
import { connect, connection, type TestKinesis, uniqueStream } from "./helpers.ts"

let k: TestKinesis
beforeAll(() => {
  k = connect()
})
afterAll(() => {
  k?.close()
})

const live = <A, E>(effect: Effect.Effect<A, E, Session>) => effect.pipe(Effect.provide(Session.layer()))

const tempDir = (prefix: string): string => fs.mkdtempSync(path.join(os.tmpdir(), `tributary-kinesis-${prefix}-`))

/** Records with one partition key each, as `{ data, key }`. */
const records = (key: string, ...data: ReadonlyArray<string>) => data.map((d) => ({ data: d, key }))

const put = (stream: string, rs: ReadonlyArray<{ data: string; key: string; hashKey?: string }>) =>
  Execute(Effect.promise(() => k.put(stream, rs)))

const stream = (options: Record<string, string>) =>
  Effect.gen(function* () {
    const spark = yield* Session
    return spark.readStream
      .format("kinesis")
      .options({ ...connection(), shardFetchInterval: "0", ...options })
      .load()
  })

/** `data` as a string with the partition key: the usual projection of these tests. */
const values = (df: DataFrame<Row>) => df.select(F.col("data").cast("string").as("data"), F.col("partitionKey"))

const createSource = (options: Record<string, string>, metadataPath: string) =>
  KinesisSourceFormat.create({
    options: { ...connection(), shardFetchInterval: "0", ...options },
    schema: kinesisSchema,
    metadataPath,
    conf: new Map()
  })

const text = (b: unknown): string => new TextDecoder().decode(b as Uint8Array)

describe("kinesis source", () => {
  it.live("reads records written with PutRecords and replays exactly after a restart", () =>
    live(
      Effect.gen(function* () {
        const name = uniqueStream("restart")
        yield* Effect.promise(() => k.createStream(name, 2))
        yield* Effect.promise(() => k.put(name, records("k1", "before")))
        const df = yield* stream({ streamName: name, initialPosition: "trim_horizon" })
        yield* testStream(values(df), "append", [
          StartStream(),
          CheckAnswer({ data: "before", partitionKey: "k1" }),
          put(name, [...records("k1", "a", "b"), ...records("k2", "c")]),
          CheckAnswer(
            { data: "before", partitionKey: "k1" },
            { data: "a", partitionKey: "k1" },
            { data: "b", partitionKey: "k1" },
            { data: "c", partitionKey: "k2" }
          ),
          StopStream,
          put(name, [...records("k2", "d"), ...records("k1", "e")]),
          StartStream(),
          CheckAnswer(
            { data: "before", partitionKey: "k1" },
            { data: "a", partitionKey: "k1" },
            { data: "b", partitionKey: "k1" },
            { data: "c", partitionKey: "k2" },
            { data: "d", partitionKey: "k2" },
            { data: "e", partitionKey: "k1" }
          )
        ])
      })
    )
  )

  it.live("logs offsets per shard and gives the same rows for a logged range every time", () =>
    Effect.gen(function* () {
      const name = uniqueStream("offsets")
      yield* Effect.promise(() => k.createStream(name, 2))
      const written = yield* Effect.promise(() =>
        k.put(name, [...records("x", "x1", "x2"), ...records("y", "y1"), ...records("x", "x3")])
      )
      const dir = tempDir("offsets")
      const source: MicroBatchSource = yield* createSource({ streamName: name, initialPosition: "earliest" }, dir)
      const start = yield* source.initialOffset()
      const shardIds = [...new Set((yield* Effect.promise(() => k.shards(name))).map((s) => s.ShardId ?? ""))].sort()
      expect(start).toEqual({
        [name]: Object.fromEntries(shardIds.map((id) => [id, { iteratorType: "TRIM_HORIZON", iteratorPosition: "" }]))
      })
      // The initial offset is kept in the source's metadata folder.
      expect(JSON.parse(fs.readFileSync(path.join(dir, "initialOffsets.json"), "utf8"))).toEqual(start)
      const end = yield* source.latestOffset(start, source.defaultReadLimit())
      const lastByShard = new Map<string, string>()
      for (const w of written) lastByShard.set(w.shardId, w.sequenceNumber)
      expect(end).toEqual({
        [name]: Object.fromEntries(
          shardIds.map((id) => [
            id,
            lastByShard.has(id)
              ? { iteratorType: "AFTER_SEQUENCE_NUMBER", iteratorPosition: lastByShard.get(id) }
              : { iteratorType: "TRIM_HORIZON", iteratorPosition: "" }
          ])
        )
      })
      // No new data: the same offset back.
      expect(yield* source.latestOffset(end, source.defaultReadLimit())).toEqual(end)
      const decoded = yield* source.decodeOffset(JSON.parse(JSON.stringify(end)))
      const rows1 = yield* source.getBatch(start, decoded)
      yield* source.commit(decoded)
      yield* Effect.promise(() => k.put(name, records("x", "later")))
      // After the commit the range is read again from Kinesis: the same rows, not "later".
      const rows2 = yield* source.getBatch(start, decoded)
      expect(rows2).toEqual(rows1)
      const bySeq = new Map(written.map((w, i) => [w.sequenceNumber, ["x1", "x2", "y1", "x3"][i]]))
      expect(rows1.map((r) => [text(r[0]), r[1], r[2], r[3]])).toEqual(
        [...rows1].map((r) => [bySeq.get(r[3] as string), name, bySeq.get(r[3] as string)?.[0], r[3]])
      )
      expect(rows1.map((r) => text(r[0])).filter((d) => d.startsWith("x"))).toEqual(["x1", "x2", "x3"])
      expect(typeof rows1[0][4]).toBe("number")
      // A fresh source (a restart) replays the range without anything prefetched.
      const again = yield* createSource({ streamName: name, initialPosition: "earliest" }, dir)
      expect(yield* again.initialOffset()).toEqual(start)
      expect(yield* again.getBatch(start, decoded)).toEqual(rows1)
      yield* source.stop()
      yield* again.stop()
    })
  )

  it.live(
    "limits each shard per batch (kinesis.executor.maxFetchRecordsPerShard) and each call (maxRecordsPerFetch)",
    () =>
      Effect.gen(function* () {
        const name = uniqueStream("limits")
        yield* Effect.promise(() => k.createStream(name, 1))
        yield* Effect.promise(() => k.put(name, records("k", ...Array.from({ length: 7 }, (_, i) => `r${i}`))))
        const source = yield* createSource(
          {
            streamName: name,
            initialPosition: "trim_horizon",
            maxRecordsPerFetch: "2",
            "kinesis.executor.maxFetchRecordsPerShard": "3"
          },
          tempDir("limits")
        )
        const batches: Array<Array<string>> = []
        let start = yield* source.initialOffset()
        for (;;) {
          const end = yield* source.latestOffset(start, source.defaultReadLimit())
          if (JSON.stringify(end) === JSON.stringify(start)) break
          batches.push((yield* source.getBatch(start, end)).map((r) => text(r[0])))
          start = end
        }
        expect(batches).toEqual([["r0", "r1", "r2"], ["r3", "r4", "r5"], ["r6"]])
        // A read limit from the engine (MaxRows) caps the whole batch too.
        const capped = yield* createSource({ streamName: name, initialPosition: "trim_horizon" }, tempDir("limits2"))
        const s0 = yield* capped.initialOffset()
        const e0 = yield* capped.latestOffset(s0, { _tag: "MaxRows", maxRows: 4 })
        expect((yield* capped.getBatch(s0, e0)).map((r) => text(r[0]))).toEqual(["r0", "r1", "r2", "r3"])
        yield* source.stop()
        yield* capped.stop()
      })
  )

  it.live("restarts from the checkpoint with a file sink: every record exactly once", () =>
    live(
      Effect.gen(function* () {
        const spark = yield* Session
        const name = uniqueStream("filesink")
        yield* Effect.promise(() => k.createStream(name, 3))
        const out = tempDir("out")
        const chk = tempDir("chk")
        const start = () =>
          Effect.flatMap(stream({ streamName: name, initialPosition: "trim_horizon" }), (df) =>
            df
              .select(F.col("data").cast("string").as("data"), F.col("partitionKey"), F.col("sequenceNumber"))
              .writeStream.format("json")
              .option("checkpointLocation", chk)
              .start(out)
          )
        const keys = ["a", "b", "c", "d", "e"]
        const batch = (round: number) => keys.map((key) => ({ data: `${key}-${round}`, key }))
        const expected: Array<string> = []
        const write = (round: number) =>
          Effect.promise(async () => {
            await k.put(name, batch(round))
            for (const r of batch(round)) expected.push(r.data)
          })
        yield* write(0)
        const q1 = yield* start()
        yield* q1.processAllAvailable()
        yield* write(1)
        yield* q1.processAllAvailable()
        yield* q1.stop()
        yield* write(2)
        const q2 = yield* start()
        yield* q2.processAllAvailable()
        yield* q2.stop()
        // A crash after the offset log but before the commit log: the last batch runs again
        // from its logged offsets (read again from Kinesis) and the sink keeps one copy of it.
        yield* write(3)
        const q3 = yield* start()
        yield* q3.processAllAvailable()
        yield* q3.stop()
        const commits = fs.readdirSync(path.join(chk, "commits")).filter((f) => /^\d+$/.test(f))
        const last = Math.max(...commits.map(Number))
        fs.rmSync(path.join(chk, "commits", String(last)))
        fs.rmSync(path.join(chk, "commits", `.${last}.crc`), { force: true })
        yield* write(4)
        const q4 = yield* start()
        yield* q4.processAllAvailable()
        yield* q4.stop()
        const back = yield* spark.read.schema("data STRING, partitionKey STRING, sequenceNumber STRING").json(out)
        const rows = (yield* back.collect()) as ReadonlyArray<{
          data: string
          partitionKey: string
          sequenceNumber: string
        }>
        expect(rows.map((r) => r.data).sort()).toEqual([...expected].sort())
        // Each key's records (a key maps to one shard) in sequence-number order are the order
        // they were written: every record kept its own sequence number.
        const bySequence = [...rows].sort((a, b) => {
          const d = BigInt(a.sequenceNumber) - BigInt(b.sequenceNumber)
          return d < 0n ? -1 : d > 0n ? 1 : 0
        })
        for (const key of keys) {
          expect(bySequence.filter((r) => r.partitionKey === key).map((r) => r.data)).toEqual(
            expected.filter((d) => d.startsWith(`${key}-`))
          )
        }
      })
    )
  )

  it.live("follows a split and a merge during the query: parents first, every record once, in order", () =>
    live(
      Effect.gen(function* () {
        const name = uniqueStream("reshard")
        yield* Effect.promise(() => k.createStream(name, 1))
        const df = yield* stream({ streamName: name, initialPosition: "trim_horizon" })
        const batches: Array<ReadonlyArray<{ data: string; partitionKey: string; sequenceNumber: string }>> = []
        const q = yield* df
          .select(F.col("data").cast("string").as("data"), F.col("partitionKey"), F.col("sequenceNumber"))
          .writeStream.foreachBatch((b) =>
            Effect.map(b.collect(), (rs) => {
              if (rs.length > 0) batches.push(rs as never)
            })
          )
          .start()
        const low = "1"
        const high = "340282366920938463463374607431768211400"
        const expected = new Map<string, Array<string>>()
        const write = (round: string) =>
          Effect.promise(async () => {
            const rs = [
              { data: `low-${round}-1`, key: "low", hashKey: low },
              { data: `high-${round}-1`, key: "high", hashKey: high },
              { data: `low-${round}-2`, key: "low", hashKey: low },
              { data: `high-${round}-2`, key: "high", hashKey: high }
            ]
            await k.put(name, rs)
            for (const r of rs) expected.set(r.key, [...(expected.get(r.key) ?? []), r.data])
          })
        yield* write("parent")
        const [parent] = yield* Effect.promise(() => k.shards(name))
        yield* Effect.promise(() => k.split(name, parent.ShardId ?? ""))
        yield* write("split")
        const children = (yield* Effect.promise(() => k.shards(name))).filter((s) => s.ParentShardId === parent.ShardId)
        expect(children.length).toBe(2)
        // The parent gets records no more; its children do, perhaps before the query has read them.
        yield* Effect.promise(() => k.merge(name, children[0].ShardId ?? "", children[1].ShardId ?? ""))
        yield* write("merged")
        yield* q.processAllAvailable()
        yield* q.stop()
        const all = batches.flat()
        expect(all.map((r) => r.data).sort()).toEqual([...expected.values()].flat().sort())
        for (const [key, data] of expected)
          expect(all.filter((r) => r.partitionKey === key).map((r) => r.data)).toEqual(data)
        // A parent's records come in earlier batches than any of its children's.
        const batchOf = (prefix: string) =>
          batches.map((b, i) => (b.some((r) => r.data.includes(prefix)) ? i : -1)).filter((i) => i >= 0)
        expect(Math.max(...batchOf("-parent-"))).toBeLessThan(Math.min(...batchOf("-split-")))
        expect(Math.max(...batchOf("-split-"))).toBeLessThan(Math.min(...batchOf("-merged-")))
        const shards = yield* Effect.promise(() => k.shards(name))
        expect(shards.length).toBe(4)
      })
    )
  )

  it.live("reads a split and a merge that happened before the start: each parent to its end first", () =>
    live(
      Effect.gen(function* () {
        const name = uniqueStream("presplit")
        yield* Effect.promise(() => k.createStream(name, 1))
        const low = "1"
        const high = "340282366920938463463374607431768211400"
        const write = (round: string) =>
          Effect.promise(() =>
            k.put(name, [
              { data: `low-${round}`, key: "low", hashKey: low },
              { data: `high-${round}`, key: "high", hashKey: high }
            ])
          )
        yield* write("p")
        const [parent] = yield* Effect.promise(() => k.shards(name))
        yield* Effect.promise(() => k.split(name, parent.ShardId ?? ""))
        yield* write("c")
        const children = (yield* Effect.promise(() => k.shards(name))).filter((s) => s.ParentShardId === parent.ShardId)
        yield* Effect.promise(() => k.merge(name, children[0].ShardId ?? "", children[1].ShardId ?? ""))
        yield* write("m")
        // Nothing read yet: the first batch may only hold the first shard's records, the next
        // its children's, the last the merged shard's.
        const df = yield* stream({ streamName: name, initialPosition: "trim_horizon" })
        const batches: Array<ReadonlyArray<string>> = []
        const q = yield* df
          .select(F.col("data").cast("string").as("data"))
          .writeStream.foreachBatch((b) =>
            Effect.map(b.collect(), (rs) => {
              if (rs.length > 0) batches.push(rs.map((r) => r.data as string).sort())
            })
          )
          .start()
        yield* q.processAllAvailable()
        yield* q.stop()
        expect(batches).toEqual([
          ["high-p", "low-p"],
          ["high-c", "low-c"],
          ["high-m", "low-m"]
        ])
      })
    )
  )

  it.live("Trigger.AvailableNow reads what arrived before the start within the limits, past a split, then stops", () =>
    live(
      Effect.gen(function* () {
        const name = uniqueStream("availablenow")
        yield* Effect.promise(() => k.createStream(name, 1))
        yield* Effect.promise(() => k.put(name, records("k", "p1", "p2", "p3")))
        const [parent] = yield* Effect.promise(() => k.shards(name))
        // The children get no records here: kinesalite stamps a new shard's records up to a
        // second in the future, after the query's start, where AvailableNow rightly stops.
        yield* Effect.promise(() => k.split(name, parent.ShardId ?? ""))
        const df = yield* stream({
          streamName: name,
          initialPosition: "trim_horizon",
          "kinesis.executor.maxFetchRecordsPerShard": "2"
        })
        const batches: Array<ReadonlyArray<string>> = []
        const q = yield* df
          .select(F.col("data").cast("string").as("data"))
          .writeStream.trigger(Trigger.AvailableNow())
          .foreachBatch((b) =>
            Effect.map(b.collect(), (rs) => {
              if (rs.length > 0) batches.push(rs.map((r) => r.data as string))
            })
          )
          .start()
        yield* q.awaitTermination()
        expect(batches).toEqual([["p1", "p2"], ["p3"]])
      })
    )
  )

  it.live("Trigger.AvailableNow leaves records that arrived after the start", () =>
    Effect.gen(function* () {
      const name = uniqueStream("cutoff")
      yield* Effect.promise(() => k.createStream(name, 1))
      const source = yield* createSource({ streamName: name, initialPosition: "trim_horizon" }, tempDir("cutoff"))
      const start = yield* source.initialOffset()
      yield* Effect.promise(() => k.put(name, records("k", "before")))
      if (source.prepareForTriggerAvailableNow === undefined) throw new Error("no AvailableNow support")
      yield* source.prepareForTriggerAvailableNow()
      // Writes until a record arrives in a later millisecond than the start (no sleeping).
      const startedAt = Date.now()
      for (let i = 0; ; i++) {
        const [w] = yield* Effect.promise(() => k.put(name, records("k", `after-${i}`)))
        const probe = yield* createSource({ streamName: name, initialPosition: "trim_horizon" }, tempDir("probe2"))
        const p0 = yield* probe.initialOffset()
        const rows = yield* probe.getBatch(p0, yield* probe.latestOffset(p0, probe.defaultReadLimit()))
        yield* probe.stop()
        if ((rows.find((r) => r[3] === w.sequenceNumber)?.[4] as number) > startedAt) break
      }
      const end = yield* source.latestOffset(start, source.defaultReadLimit())
      expect((yield* source.getBatch(start, end)).map((r) => text(r[0]))).toEqual(["before"])
      expect(yield* source.latestOffset(end, source.defaultReadLimit())).toEqual(end)
      yield* source.stop()
    })
  )

  it.live("starts at latest by default and at a timestamp with at_timestamp", () =>
    live(
      Effect.gen(function* () {
        const name = uniqueStream("positions")
        yield* Effect.promise(() => k.createStream(name, 2))
        const first = yield* Effect.promise(() => k.put(name, records("k", "old")))
        // latest: nothing written before the query started
        const latest = yield* stream({ streamName: name })
        yield* testStream(values(latest).select("data"), "append", [
          StartStream(),
          CheckAnswer(),
          put(name, records("k", "new")),
          CheckAnswer({ data: "new" })
        ])
        // at_timestamp: the records that arrived at or after the time (ms precision), found by
        // reading back when the first record and a later one arrived.
        const probe = yield* createSource({ streamName: name, initialPosition: "trim_horizon" }, tempDir("probe"))
        const arrivals = (rows: ReadonlyArray<ReadonlyArray<unknown>>) =>
          new Map(rows.map((r) => [r[3] as string, r[4] as number]))
        const s0 = yield* probe.initialOffset()
        let seen = arrivals(yield* probe.getBatch(s0, yield* probe.latestOffset(s0, probe.defaultReadLimit())))
        const oldAt = seen.get(first[0].sequenceNumber) as number
        // Writes until a record arrives in a later millisecond than "old" did (no sleeping).
        let laterAt = oldAt
        let laterData = ""
        for (let i = 0; laterAt <= oldAt; i++) {
          laterData = `later-${i}`
          const [w] = yield* Effect.promise(() => k.put(name, records("k", laterData)))
          const s = yield* probe.initialOffset()
          seen = arrivals(yield* probe.getBatch(s, yield* probe.latestOffset(s, probe.defaultReadLimit())))
          laterAt = seen.get(w.sequenceNumber) as number
        }
        yield* probe.stop()
        const iso = new Date(laterAt).toISOString().replace("Z", "+00:00")
        const at = yield* stream({
          streamName: name,
          initialPosition: JSON.stringify({ at_timestamp: iso, format: "yyyy-MM-dd'T'HH:mm:ss.SSSXXX" })
        })
        yield* testStream(values(at).select("data"), "append", [StartStream(), CheckAnswer({ data: laterData })])
      })
    )
  )

  it.live("fails on a shard that left the stream before it was read to its end, unless failOnDataLoss is false", () =>
    Effect.gen(function* () {
      const name = uniqueStream("dataloss")
      yield* Effect.promise(() => k.createStream(name, 1))
      const [w] = yield* Effect.promise(() => k.put(name, records("k", "a")))
      // An offset naming a shard the stream no longer lists (as after its retention period).
      const start = {
        [name]: {
          [w.shardId]: { iteratorType: "TRIM_HORIZON", iteratorPosition: "" },
          "shardId-000000000099": { iteratorType: "AFTER_SEQUENCE_NUMBER", iteratorPosition: "12" }
        }
      }
      const strict = yield* createSource({ streamName: name }, tempDir("loss1"))
      const e = yield* Effect.flip(strict.latestOffset(start, strict.defaultReadLimit()))
      expect(e).toBeInstanceOf(ConnectorError)
      expect(e.message).toContain(
        `Shard ${name}/shardId-000000000099 at AFTER_SEQUENCE_NUMBER 12 is no longer in the stream`
      )
      expect(e.message).toContain("failOnDataLoss")
      const lenient = yield* createSource({ streamName: name, failOnDataLoss: "false" }, tempDir("loss2"))
      const end = yield* lenient.latestOffset(start, lenient.defaultReadLimit())
      expect(end).toEqual({
        [name]: { [w.shardId]: { iteratorType: "AFTER_SEQUENCE_NUMBER", iteratorPosition: w.sequenceNumber } }
      })
      expect((yield* lenient.getBatch(start, end)).map((r) => text(r[0]))).toEqual(["a"])
      yield* strict.stop()
      yield* lenient.stop()
    })
  )

  it.live("fails a stream that does not exist with a ConnectorError that is the user's to fix", () =>
    Effect.gen(function* () {
      const source = yield* createSource({ streamName: uniqueStream("missing") }, tempDir("missing"))
      const e = yield* Effect.flip(source.initialOffset())
      expect(e).toBeInstanceOf(ConnectorError)
      const c = e as ConnectorError
      expect(c.connector).toBe("kinesis")
      expect(c.domain).toBe("user")
      expect(c.retryable).toBe(false)
      expect(c.message).toContain("ResourceNotFoundException")
      yield* source.stop()
    })
  )
})
