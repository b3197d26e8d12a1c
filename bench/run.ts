/**
 * `npm run bench`: tributary against baselines measured in the same process, reported as
 * ratios (these machines are shared and noisy; absolute numbers move, ratios much less).
 *
 * Workload 1 — batch group-by: N rows of { user, amount } over 10 000 users; count and sum of
 * amount per user, three ways: tributary's batch engine, a hand-written JavaScript loop
 * (one Map), and DuckDB SQL over the same rows already inside DuckDB.
 */
import { Effect, Schema } from "effect"
import { F, Session } from "../mod.ts"
import * as DuckDB from "../state/DuckDB.ts"
import * as T from "../core/DataType.ts"

const N = Number(process.env.BENCH_ROWS ?? 1_000_000)
const USERS = 10_000
const RUNS = Number(process.env.BENCH_RUNS ?? 3)

interface Sale {
  readonly user: string
  readonly amount: number
}

const makeRows = (): Array<Sale> => {
  const rows = new Array<Sale>(N)
  let seed = 42
  for (let i = 0; i < N; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    rows[i] = { user: `u${seed % USERS}`, amount: seed % 100 }
  }
  return rows
}

/** Best of `RUNS` wall-clock timings, in ms. */
const best = async (f: () => Promise<unknown> | unknown): Promise<number> => {
  let min = Number.POSITIVE_INFINITY
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now()
    await f()
    min = Math.min(min, performance.now() - t0)
  }
  return min
}

const handWritten = (rows: ReadonlyArray<Sale>): number => {
  const groups = new Map<string, { count: number; sum: number }>()
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]
    const g = groups.get(r.user)
    if (g === undefined) groups.set(r.user, { count: 1, sum: r.amount })
    else {
      g.count++
      g.sum += r.amount
    }
  }
  return groups.size
}

const rate = (ms: number): string => `${((N / ms) * 1000 / 1e6).toFixed(2)} M rows/s`

const main = Effect.gen(function* () {
  const spark = yield* Session
  const rows = makeRows()
  const df = spark.createDataFrame(rows, Schema.Struct({ user: Schema.String, amount: Schema.Int }))
  const query = df.groupBy("user").agg(F.count("*").as("n"), F.sum("amount").as("total"))

  const tributaryMs = yield* Effect.promise(() => best(() => Effect.runPromise(query.count())))
  const loopMs = yield* Effect.promise(() => best(() => handWritten(rows)))
  const duckMs = yield* DuckDB.withMemory((c) =>
    Effect.gen(function* () {
      const schema = T.struct([T.field("user", T.StringType), T.field("amount", T.IntegerType)])
      yield* DuckDB.createTable(c, "sales", schema, rows.map((r) => [r.user, r.amount]))
      return yield* Effect.promise(() =>
        best(() => Effect.runPromise(c.query('SELECT "user", count(*), sum(amount) FROM sales GROUP BY "user"')))
      )
    })
  )
  const groups = yield* query.count()
  console.log(`batch group-by: ${N} rows, ${groups} groups (best of ${RUNS})`)
  console.log(`  tributary         ${tributaryMs.toFixed(1)} ms  ${rate(tributaryMs)}`)
  console.log(`  hand-written loop ${loopMs.toFixed(1)} ms  ${rate(loopMs)}`)
  console.log(`  DuckDB SQL        ${duckMs.toFixed(1)} ms  ${rate(duckMs)}`)
  console.log(`  ratio tributary / hand-written loop (throughput): ${(loopMs / tributaryMs).toFixed(3)}`)
  console.log(`  ratio tributary / DuckDB SQL (throughput):        ${(duckMs / tributaryMs).toFixed(3)}`)
})

await Effect.runPromise(main.pipe(Effect.provide(Session.layer())))
