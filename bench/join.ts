/**
 * Stream-stream join benchmark, Nexmark q8 shape: new people joined with the auctions they open
 * in the same 10-second tumbling window (`person.id = auction.seller AND window(person.ts) =
 * window(auction.ts)`), both streams with a 5-second watermark, append mode, state in DuckDB
 * (and again in the file provider). Against a hand-written JavaScript loop doing the same
 * symmetric hash join over the same micro-batches (a Map per side from (id, window) to rows,
 * emission on arrival, eviction of closed windows by the same watermark).
 *
 * Data: `BENCH_JOIN_EVENTS` events (default 200 000) in `BENCH_JOIN_BATCHES` micro-batches
 * (default 10), one person per 10 events and nine auctions, each auction's seller one of the 50
 * newest people, event time advancing 1 ms per event; every micro-batch adds both streams' rows.
 * The two sides must emit the same number of joined rows, or the run fails.
 *
 * `BENCH_JOIN_PROVIDERS` (default `duckdb,memory`) picks the state store providers.
 *
 * Run: `node_modules/.bin/node bench/join.ts` (or through `npm run bench`, which runs it last).
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "../mod.ts"

const EVENTS = Number(process.env.BENCH_JOIN_EVENTS ?? 200_000)
const BATCHES = Number(process.env.BENCH_JOIN_BATCHES ?? 10)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const WINDOW_MS = 10_000
const DELAY_MS = 5_000

interface Person {
  readonly id: number
  readonly name: string
  readonly ts: Date
}
interface Auction {
  readonly seller: number
  readonly auction: number
  readonly ts: Date
}
interface Batch {
  readonly people: ReadonlyArray<Person>
  readonly auctions: ReadonlyArray<Auction>
}

const makeBatches = (): ReadonlyArray<Batch> => {
  const out: Array<Batch> = []
  const perBatch = Math.ceil(EVENTS / BATCHES)
  let seed = 7
  let nextPerson = 0
  let nextAuction = 0
  for (let b = 0; b < BATCHES; b++) {
    const people: Array<Person> = []
    const auctions: Array<Auction> = []
    for (let i = 0; i < perBatch; i++) {
      const t = b * perBatch + i
      const ts = new Date(t)
      if (t % 10 === 0) {
        people.push({ id: nextPerson, name: `p${nextPerson}`, ts })
        nextPerson++
      } else {
        seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff
        const seller = Math.max(0, nextPerson - 1 - ((seed >>> 4) % 50))
        auctions.push({ seller, auction: nextAuction++, ts })
      }
    }
    out.push({ people, auctions })
  }
  return out
}

/**
 * The same join by hand: per side a Map from `id/windowStart` to the rows, each new row joined
 * with the other side's stored rows (left rows of the batch first, as the engine), windows
 * evicted once the watermark (max event time − delay, as of the previous batch) reaches their end.
 */
const handJoin = (batches: ReadonlyArray<Batch>): number => {
  const people = new Map<string, Array<Person>>()
  const auctions = new Map<string, Array<Auction>>()
  let emitted = 0
  let watermark = 0
  let maxTime = 0
  const windowOf = (ms: number) => Math.floor(ms / WINDOW_MS) * WINDOW_MS
  for (const b of batches) {
    const late = watermark
    for (const p of b.people) {
      const t = p.ts.getTime()
      // Late when the row's window (its event-time column) ends at or below the watermark.
      if (windowOf(t) + WINDOW_MS <= late) continue
      if (t > maxTime) maxTime = t
      const key = `${p.id}/${windowOf(t)}`
      const others = auctions.get(key)
      if (others !== undefined) {
        for (const a of others) if (a.seller === p.id) emitted++
      }
      const list = people.get(key)
      if (list === undefined) people.set(key, [p])
      else list.push(p)
    }
    for (const a of b.auctions) {
      const t = a.ts.getTime()
      if (windowOf(t) + WINDOW_MS <= late) continue
      if (t > maxTime) maxTime = t
      const key = `${a.seller}/${windowOf(t)}`
      const others = people.get(key)
      if (others !== undefined) emitted += others.length
      const list = auctions.get(key)
      if (list === undefined) auctions.set(key, [a])
      else list.push(a)
    }
    watermark = Math.max(watermark, maxTime - DELAY_MS)
    for (const side of [people, auctions] as const) {
      for (const key of side.keys()) {
        const start = Number(key.slice(key.indexOf("/") + 1))
        if (start + WINDOW_MS <= watermark) side.delete(key)
      }
    }
  }
  return emitted
}

const engineJoin = (batches: ReadonlyArray<Batch>, dir: string) =>
  Effect.gen(function* () {
    const personIn = yield* MemoryStream.make(Schema.Struct({ id: Schema.Int, name: Schema.String, ts: Schema.Date }))
    const auctionIn = yield* MemoryStream.make(
      Schema.Struct({ seller: Schema.Int, auction: Schema.Int, ts: Schema.Date })
    )
    const people = personIn
      .toDF()
      .withWatermark("ts", "5 seconds")
      .select(F.col("id"), F.col("name"), F.window("ts", "10 seconds").as("pw"))
    const auctions = auctionIn
      .toDF()
      .withWatermark("ts", "5 seconds")
      .select(F.col("seller"), F.col("auction"), F.window("ts", "10 seconds").as("aw"))
    const q8 = people
      .join(
        auctions,
        F.col("id")
          .eq(F.col("seller"))
          .and(F.col("pw").eq(F.col("aw")))
      )
      .select(F.col("id"), F.col("name"), F.col("pw").getField("start").as("starttime"))
    let emitted = 0
    const query = yield* q8.writeStream
      .option("checkpointLocation", dir)
      .foreachBatch((df) =>
        Effect.map(df.count(), (n) => {
          emitted += n
        })
      )
      .start()
    const t0 = performance.now()
    for (const b of batches) {
      // Both streams' rows of a micro-batch in one step, so they land in the same batch.
      yield* Effect.sync(() => {
        Effect.runSync(personIn.addData(b.people))
        Effect.runSync(auctionIn.addData(b.auctions))
      })
      yield* query.processAllAvailable()
    }
    const ms = performance.now() - t0
    const progress = yield* query.recentProgress()
    yield* query.stop()
    return { ms, emitted, stateRows: progress[progress.length - 1]?.stateOperators[0]?.numRowsTotal ?? 0 }
  })

const rate = (ms: number) => `${(((EVENTS / ms) * 1000) / 1e6).toFixed(2)} M rows/s`

const runProvider = (provider: "duckdb" | "memory", root: string) =>
  Effect.gen(function* () {
    const batches = makeBatches()
    let best: { ms: number; emitted: number; stateRows: number } | undefined
    for (let i = 0; i < RUNS; i++) {
      const r = yield* engineJoin(batches, join(root, `run${i}`))
      if (best === undefined || r.ms < best.ms) best = r
    }
    let handMs = Number.POSITIVE_INFINITY
    let handEmitted = 0
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now()
      handEmitted = handJoin(batches)
      handMs = Math.min(handMs, performance.now() - t0)
    }
    const engine = best!
    if (engine.emitted !== handEmitted) {
      return yield* Effect.die(
        new Error(`join results differ: tributary ${engine.emitted}, hand-written ${handEmitted}`)
      )
    }
    console.log(
      `stream-stream windowed join, Nexmark q8 shape (${provider} state): ${EVENTS} events in ${BATCHES} batches, 10 s windows, 5 s watermark, ${engine.emitted} joined rows, ${engine.stateRows} state rows at the end (best of ${RUNS})`
    )
    console.log(`  tributary         ${engine.ms.toFixed(1)} ms  ${rate(engine.ms)}`)
    console.log(`  hand-written loop ${handMs.toFixed(1)} ms  ${rate(handMs)}`)
    console.log(`  ratio tributary / hand-written loop (throughput): ${(handMs / engine.ms).toFixed(3)}`)
  }).pipe(Effect.provide(Session.layer({ stateStore: provider })))

/** Runs the join benchmark with both state store providers. */
export const runJoinBench = async (): Promise<void> => {
  const providers = (process.env.BENCH_JOIN_PROVIDERS ?? "duckdb,memory").split(",") as Array<"duckdb" | "memory">
  for (const provider of providers) {
    const root = await mkdtemp(join(tmpdir(), "tributary-bench-join-"))
    // The session (and its state store's background maintenance) ends before the folder goes.
    await Effect.runPromise(runProvider(provider, root))
    await rm(root, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runJoinBench()
