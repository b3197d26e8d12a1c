import { create } from "@bufbuild/protobuf"
import { tableFromIPC } from "apache-arrow"
import { Effect, Option, type Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { make, parseAddress, type SparkConnectClient, SparkConnectTransport } from "../../connect/Client.ts"
import { PlanSchema } from "../../connect/gen/spark/connect/base_pb.ts"
import type { Expression } from "../../connect/gen/spark/connect/expressions_pb.ts"
import { type Relation, RelationSchema } from "../../connect/gen/spark/connect/relations_pb.ts"
import { makeStreams, startQuery, writeStreamCommand } from "../../connect/RemoteStreaming.ts"
import type { StreamingQueryError } from "../../core/Errors.ts"
import { Trigger } from "../../core/Trigger.ts"
import type { RemoteWriteSpec } from "../../structured/contracts/Remote.ts"

const fromEnv = process.env.TRIBUTARY_SPARK_REMOTE
const sparkRemote = fromEnv !== undefined && fromEnv !== "" ? fromEnv : inject("sparkRemote")

/** Runs `f` with a client of its own (its own remote session); the session's queries are stopped at the end. */
const withClient = <A, E>(f: (client: SparkConnectClient) => Effect.Effect<A, E, Scope.Scope>): Promise<A> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const address = yield* Effect.fromResult(parseAddress(sparkRemote))
      const client = yield* make(address)
      yield* Effect.addFinalizer(() =>
        makeStreams(client)
          .active()
          .pipe(
            Effect.flatMap((qs) => Effect.forEach(qs, (q) => q.stop())),
            Effect.ignore
          )
      )
      return yield* f(client)
    }).pipe(Effect.scoped, Effect.provide(SparkConnectTransport.node))
  )

let dir = ""
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-remote-streaming-"))
})
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

let counter = 0
/** A fresh folder under the test's temp dir. */
const folder = (name: string): string => {
  const p = path.join(dir, `${name}-${++counter}`)
  fs.mkdirSync(p, { recursive: true })
  return p
}
const unique = (name: string): string => `${name}_${Date.now().toString(36)}_${++counter}`

const sql = (expression: string): Expression =>
  ({ exprType: { case: "expressionString", value: { expression } } }) as Expression

/** A streaming json read of `folder` (Spark's `spark.readStream.schema(…).json(folder)`). */
const jsonStream = (folderPath: string, schema: string, options: Record<string, string> = {}): Relation =>
  create(RelationSchema, {
    relType: {
      case: "read",
      value: {
        readType: { case: "dataSource", value: { format: "json", schema, options, paths: [folderPath] } },
        isStreaming: true
      }
    }
  })

const rateStream = (rowsPerSecond: number): Relation =>
  create(RelationSchema, {
    relType: {
      case: "read",
      value: {
        readType: { case: "dataSource", value: { format: "rate", options: { rowsPerSecond: String(rowsPerSecond) } } },
        isStreaming: true
      }
    }
  })

const project = (input: Relation, ...expressions: Array<string>): Relation =>
  create(RelationSchema, { relType: { case: "project", value: { input, expressions: expressions.map(sql) } } })

const spec = (overrides: Partial<RemoteWriteSpec>): RemoteWriteSpec => ({
  format: "memory",
  outputMode: "append",
  trigger: Trigger.Default,
  queryName: undefined,
  options: {},
  partitionColumns: [],
  hasForeachBatch: false,
  hasForeach: false,
  ...overrides
})

/** `spark.table(name).collect()` through an ExecutePlan of `Read.NamedTable`, Arrow decoded. */
const readTable = (client: SparkConnectClient, name: string) =>
  client
    .execute(
      create(PlanSchema, {
        opType: {
          case: "root",
          value: create(RelationSchema, {
            relType: { case: "read", value: { readType: { case: "namedTable", value: { unparsedIdentifier: name } } } }
          })
        }
      })
    )
    .pipe(
      Effect.map((responses) => {
        const rows: Array<Record<string, unknown>> = []
        for (const r of responses) {
          if (r.responseType.case !== "arrowBatch") continue
          for (const row of tableFromIPC(r.responseType.value.data).toArray()) rows.push({ ...row.toJSON() })
        }
        return rows
      })
    )

/** Json lines of every part file under `root` (recursively), parsed. */
const jsonLines = (root: string): Array<Record<string, unknown>> => {
  const out: Array<Record<string, unknown>> = []
  for (const e of fs.readdirSync(root, { withFileTypes: true })) {
    const p = path.join(root, e.name)
    if (e.isDirectory() && !e.name.startsWith("_")) out.push(...jsonLines(p))
    else if (e.isFile() && e.name.startsWith("part-")) {
      for (const line of fs.readFileSync(p, "utf8").split("\n")) if (line.length > 0) out.push(JSON.parse(line))
    }
  }
  return out
}

describe("startQuery on Spark Connect", () => {
  it("runs AvailableNow over json files into a memory sink; the table and the progress are Spark's", async () => {
    const input = folder("in")
    fs.writeFileSync(path.join(input, "a.json"), '{"k":"a","v":1}\n{"k":"b","v":2}\n{"k":"a","v":3}\n')
    fs.writeFileSync(path.join(input, "b.json"), '{"k":"c","v":4}\n{"k":"a","v":5}\n')
    const name = unique("mem")
    const out = await withClient((client) =>
      Effect.gen(function* () {
        const q = yield* startQuery(
          client,
          jsonStream(input, "k STRING, v LONG", { maxFilesPerTrigger: "1" }),
          spec({
            format: "memory",
            queryName: name,
            trigger: Trigger.AvailableNow(),
            options: { checkpointLocation: folder("cp") }
          })
        )
        const terminated = yield* q.awaitTermination()
        return {
          q,
          terminated,
          active: yield* q.isActive(),
          status: yield* q.status(),
          last: yield* q.lastProgress(),
          recent: yield* q.recentProgress(),
          exception: yield* q.exception(),
          explain: yield* q.explain(true),
          rows: yield* readTable(client, name)
        }
      })
    )
    expect(out.q.name).toBe(name)
    expect(out.q.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(out.q.runId).toMatch(/^[0-9a-f-]{36}$/)
    expect(out.terminated).toBe(true)
    expect(out.active).toBe(false)
    expect(out.status).toEqual({ message: "Stopped", isDataAvailable: false, isTriggerActive: false, isActive: false })
    expect(out.exception).toBeNull()
    expect(out.rows.map((r) => [r.k, Number(r.v)]).sort((x, y) => Number(x[1]) - Number(y[1]))).toEqual([
      ["a", 1],
      ["b", 2],
      ["a", 3],
      ["c", 4],
      ["a", 5]
    ])
    // One file per batch: two batches of exactly 3 and 2 rows.
    expect(out.recent.map((p) => [p.batchId, p.numInputRows])).toEqual([
      [0, 3],
      [1, 2]
    ])
    const last = out.last
    expect(last).not.toBeNull()
    if (last === null) return
    expect(last.id).toBe(out.q.id)
    expect(last.runId).toBe(out.q.runId)
    expect(last.name).toBe(name)
    expect(last.batchId).toBe(1)
    expect(last.numInputRows).toBe(2)
    expect(last.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(last.durationMs.triggerExecution).toBeGreaterThan(0)
    expect(last.processedRowsPerSecond).toBeGreaterThan(0)
    expect(last.sources).toHaveLength(1)
    expect(last.sources[0].description).toBe(`FileStreamSource[file:${input}]`)
    expect(last.sources[0].startOffset).toEqual({ logOffset: 0 })
    expect(last.sources[0].endOffset).toEqual({ logOffset: 1 })
    expect(last.sink).toEqual({ description: "MemorySink", numOutputRows: 2, metrics: {} })
    expect(last.stateOperators).toEqual([])
    expect(out.explain).toContain("== Physical Plan ==")
    expect(out.explain).toContain("MemorySink")
  })

  it("writes partitioned json files to the path option; processAllAvailable waits for new files", async () => {
    const input = folder("in")
    const output = folder("out")
    fs.writeFileSync(path.join(input, "a.json"), '{"k":"a","v":1}\n{"k":"b","v":2}\n')
    const out = await withClient((client) =>
      Effect.gen(function* () {
        const q = yield* startQuery(
          client,
          jsonStream(input, "k STRING, v LONG"),
          spec({
            format: "json",
            partitionColumns: ["k"],
            trigger: Trigger.ProcessingTime("100 milliseconds"),
            options: { checkpointLocation: folder("cp"), path: output }
          })
        )
        yield* q.processAllAvailable()
        const first = jsonLines(output)
        fs.writeFileSync(path.join(input, "b.json"), '{"k":"a","v":3}\n')
        yield* q.processAllAvailable()
        const second = jsonLines(output)
        const recent = yield* q.recentProgress()
        yield* q.stop()
        return { first, second, recent, active: yield* q.isActive() }
      })
    )
    expect(fs.existsSync(path.join(output, "_spark_metadata"))).toBe(true)
    expect(
      fs
        .readdirSync(output)
        .filter((d) => d.startsWith("k="))
        .sort()
    ).toEqual(["k=a", "k=b"])
    // The partition column lives in the folder names, not in the rows.
    expect(out.first.map((r) => r.v).sort()).toEqual([1, 2])
    expect(out.second.map((r) => r.v).sort()).toEqual([1, 2, 3])
    const withData = out.recent.filter((p) => p.numInputRows > 0).map((p) => p.numInputRows)
    expect(withData).toEqual([2, 1])
    expect(out.recent[0].sink.description).toBe(`FileSink[file:${output}]`)
    expect(out.active).toBe(false)
  })

  it("reports status, times out awaitTermination, is interruptible, and stops", async () => {
    const name = unique("files")
    const input = folder("in")
    fs.writeFileSync(path.join(input, "a.json"), '{"k":"a","v":1}\n{"k":"b","v":2}\n')
    const out = await withClient((client) =>
      Effect.gen(function* () {
        const q = yield* startQuery(
          client,
          jsonStream(input, "k STRING, v LONG"),
          spec({
            format: "noop",
            queryName: name,
            trigger: Trigger.ProcessingTime("200 milliseconds"),
            options: { checkpointLocation: folder("cp") }
          })
        )
        // Everything there is processed; the query then waits for more files.
        yield* q.processAllAvailable()
        const timedOut = yield* q.awaitTermination(1500)
        const running = yield* q.status()
        const activeBefore = yield* q.isActive()
        // awaitTermination() without a timeout is one long call: interrupting it cancels the call.
        const started = Date.now()
        const interrupted = yield* q.awaitTermination().pipe(Effect.timeoutOption("1 second"))
        const waited = Date.now() - started
        const stillActive = yield* q.isActive()
        const last = yield* q.lastProgress()
        yield* q.stop()
        yield* q.stop() // stopping a stopped query does nothing
        return {
          timedOut,
          running,
          activeBefore,
          interrupted,
          waited,
          stillActive,
          last,
          activeAfter: yield* q.isActive(),
          terminated: yield* q.awaitTermination(100),
          status: yield* q.status(),
          exception: yield* q.exception()
        }
      })
    )
    expect(out.timedOut).toBe(false)
    expect(out.running.isActive).toBe(true)
    expect(out.running.message).not.toBe("Stopped")
    expect(out.running.message.length).toBeGreaterThan(0)
    expect(out.activeBefore).toBe(true)
    expect(Option.isNone(out.interrupted)).toBe(true)
    expect(out.waited).toBeLessThan(5000)
    expect(out.stillActive).toBe(true)
    expect(out.last?.name).toBe(name)
    expect(out.last?.sources[0].description).toBe(`FileStreamSource[file:${input}]`)
    expect(out.last?.sink.description).toBe("NoopTable")
    expect(out.activeAfter).toBe(false)
    expect(out.terminated).toBe(true)
    expect(out.status.message).toBe("Stopped")
    expect(out.status.isActive).toBe(false)
    expect(out.exception).toBeNull()
  })

  it("runs a continuous trigger", async () => {
    const out = await withClient((client) =>
      Effect.gen(function* () {
        const q = yield* startQuery(
          client,
          rateStream(5),
          spec({
            format: "console",
            trigger: Trigger.Continuous("1 second"),
            options: { checkpointLocation: folder("cp") }
          })
        )
        const timedOut = yield* q.awaitTermination(2000)
        const status = yield* q.status()
        yield* q.stop()
        return { timedOut, status, after: yield* q.isActive(), exception: yield* q.exception() }
      })
    )
    expect(out.timedOut).toBe(false)
    expect(out.status.isActive).toBe(true)
    expect(out.after).toBe(false)
    expect(out.exception).toBeNull()
  })

  it("surfaces a failed query as a StreamingQueryError with Spark's message", async () => {
    const input = folder("in")
    fs.writeFileSync(path.join(input, "a.json"), '{"k":"a","v":1}\n')
    const out = await withClient((client) =>
      Effect.gen(function* () {
        const streams = makeStreams(client)
        const q = yield* startQuery(
          client,
          project(jsonStream(input, "k STRING, v LONG"), "k AS key", "CAST(v AS STRING) AS value"),
          spec({
            format: "kafka",
            trigger: Trigger.AvailableNow(),
            options: {
              checkpointLocation: folder("cp"),
              "kafka.bootstrap.servers": "127.0.0.1:1",
              topic: "tributary-nowhere",
              "kafka.max.block.ms": "1000"
            }
          })
        )
        const awaited = yield* Effect.flip(q.awaitTermination())
        const exception = yield* q.exception()
        const processAll = yield* Effect.flip(q.processAllAvailable())
        const any = yield* Effect.flip(streams.awaitAnyTermination())
        return { q, awaited, exception, processAll, any, active: yield* q.isActive() }
      })
    )
    const check = (e: StreamingQueryError | null) => {
      expect(e?._tag).toBe("StreamingQueryError")
      expect(e?.queryId).toBe(out.q.id)
      expect(e?.runId).toBe(out.q.runId)
      expect(e?.message).toMatch(
        new RegExp(`^Query \\[id = ${out.q.id}, runId = ${out.q.runId}\\] terminated with exception: `)
      )
      expect(e?.message).toContain(
        "org.apache.kafka.common.errors.TimeoutException: Topic tributary-nowhere not present in metadata after 1000 ms."
      )
      const cause = e?.cause as { _tag: string; errorClass?: string; message: string }
      expect(cause._tag).toBe("ConnectorError")
      expect(cause.errorClass).toBe("STREAM_FAILED")
      expect(cause.message).toContain("JVM stacktrace:")
    }
    check(out.awaited)
    check(out.exception)
    check(out.processAll)
    check(out.any as StreamingQueryError)
    expect(out.active).toBe(false)
  })

  it("passes Spark's own refusals back as AnalysisError", async () => {
    const e = await withClient((client) =>
      Effect.flip(startQuery(client, rateStream(1), spec({ format: "memory", queryName: undefined })))
    )
    expect(e._tag).toBe("AnalysisError")
    expect(e.message).toContain("queryName must be specified for memory sink")
  })
})

describe("spark.streams on Spark Connect", () => {
  it("lists, gets, awaits any termination and resets terminated queries", async () => {
    const n1 = unique("s1")
    const n2 = unique("s2")
    const out = await withClient((client) =>
      Effect.gen(function* () {
        const streams = makeStreams(client)
        const start = (name: string) =>
          startQuery(
            client,
            rateStream(5),
            spec({ format: "noop", queryName: name, options: { checkpointLocation: folder("cp") } })
          )
        const q1 = yield* start(n1)
        const q2 = yield* start(n2)
        const active = yield* streams.active()
        const got = yield* streams.get(q2.id)
        const missing = yield* streams.get("00000000-0000-0000-0000-000000000000")
        const gotStatus = got === undefined ? undefined : yield* got.isActive()
        const none = yield* streams.awaitAnyTermination(500)
        yield* q1.stop()
        const any = yield* streams.awaitAnyTermination()
        const anyAgain = yield* streams.awaitAnyTermination(100)
        yield* streams.resetTerminated()
        const afterReset = yield* streams.awaitAnyTermination(500)
        const activeAfter = yield* streams.active()
        // A handle from `get` controls the query like the one `startQuery` returned.
        if (got !== undefined) yield* got.stop()
        return {
          q1,
          q2,
          active,
          got,
          missing,
          gotStatus,
          none,
          any,
          anyAgain,
          afterReset,
          activeAfter,
          q2Active: yield* q2.isActive(),
          activeEnd: yield* streams.active()
        }
      })
    )
    expect(out.active.map((q) => [q.id, q.runId, q.name]).sort()).toEqual(
      [
        [out.q1.id, out.q1.runId, n1],
        [out.q2.id, out.q2.runId, n2]
      ].sort()
    )
    expect(out.got?.id).toBe(out.q2.id)
    expect(out.got?.runId).toBe(out.q2.runId)
    expect(out.got?.name).toBe(n2)
    expect(out.gotStatus).toBe(true)
    expect(out.missing).toBeUndefined()
    expect(out.none).toBe(false)
    expect(out.any).toBe(true)
    expect(out.anyAgain).toBe(true)
    expect(out.afterReset).toBe(false)
    expect(out.activeAfter.map((q) => q.id)).toEqual([out.q2.id])
    expect(out.q2Active).toBe(false)
    expect(out.activeEnd).toEqual([])
  })
})

describe("startQuery refusals and the command it sends", () => {
  /** A client that records what would be sent; refusals must send nothing. */
  const recording = () => {
    const sent: Array<unknown> = []
    const client: SparkConnectClient = {
      address: {
        host: "127.0.0.1",
        port: 1,
        token: undefined,
        userId: "t",
        sessionId: undefined,
        useSsl: false,
        userAgent: "t"
      },
      sessionId: "00000000-0000-0000-0000-000000000000",
      execute: (plan) => Effect.sync(() => void sent.push(plan)).pipe(Effect.as([])),
      executeEach: (plan) => Effect.sync(() => void sent.push(plan)),
      analyze: (a) => Effect.sync(() => void sent.push(a)).pipe(Effect.andThen(Effect.die("not used"))),
      config: (c) => Effect.sync(() => void sent.push(c)).pipe(Effect.andThen(Effect.die("not used")))
    }
    return { client, sent }
  }

  it("refuses foreachBatch, foreach and an invalid trigger before sending anything", async () => {
    const { client, sent } = recording()
    const refuse = (s: RemoteWriteSpec) => Effect.runPromise(Effect.flip(startQuery(client, rateStream(1), s)))
    const batch = await refuse(spec({ hasForeachBatch: true }))
    expect(batch._tag).toBe("AnalysisError")
    expect(batch._tag === "AnalysisError" && batch.reason).toBe("UnsupportedOperation")
    expect(batch.message).toMatch(/^foreachBatch with a JavaScript function cannot run on a Spark Connect server/)
    const each = await refuse(spec({ hasForeach: true }))
    expect(each._tag === "AnalysisError" && each.reason).toBe("UnsupportedOperation")
    expect(each.message).toMatch(/^foreach with a JavaScript writer cannot run on a Spark Connect server/)
    // @ts-expect-error not an interval: the types reject it, and so does the run time
    const nan = await refuse(spec({ trigger: Trigger.ProcessingTime("soon") }))
    expect(nan._tag === "AnalysisError" && nan.reason).toBe("InvalidArgument")
    const negative = await refuse(spec({ trigger: Trigger.Continuous(-5) }))
    expect(negative._tag === "AnalysisError" && negative.reason).toBe("InvalidArgument")
    expect(sent).toEqual([])
  })

  it("fails with a ConnectorError when the server answers without a result", async () => {
    const { client, sent } = recording()
    const e = await Effect.runPromise(Effect.flip(startQuery(client, rateStream(1), spec({ queryName: "x" }))))
    expect(e._tag).toBe("ConnectorError")
    expect(sent).toHaveLength(1)
  })

  it("encodes triggers, options, the path and partitioning as pyspark does", () => {
    const input = rateStream(1)
    const cmd = (s: Partial<RemoteWriteSpec>) => writeStreamCommand(input, spec(s))
    expect(cmd({ trigger: Trigger.ProcessingTime("10 seconds") }).trigger).toEqual({
      case: "processingTimeInterval",
      value: "10000 milliseconds"
    })
    expect(cmd({ trigger: Trigger.Default }).trigger).toEqual({ case: undefined })
    expect(cmd({ trigger: Trigger.Once() }).trigger).toEqual({ case: "once", value: true })
    expect(cmd({ trigger: Trigger.AvailableNow() }).trigger).toEqual({ case: "availableNow", value: true })
    expect(cmd({ trigger: Trigger.Continuous("2 seconds") }).trigger).toEqual({
      case: "continuousCheckpointInterval",
      value: "2000 milliseconds"
    })
    const c = cmd({
      format: "parquet",
      outputMode: "append",
      queryName: "q",
      options: { path: "/tmp/out", checkpointLocation: "/tmp/cp", compression: "snappy" },
      partitionColumns: ["a", "b"]
    })
    expect(c.format).toBe("parquet")
    expect(c.outputMode).toBe("append")
    expect(c.queryName).toBe("q")
    expect(c.sinkDestination).toEqual({ case: "path", value: "/tmp/out" })
    expect(c.options).toEqual({ checkpointLocation: "/tmp/cp", compression: "snappy" })
    expect(c.partitioningColumnNames).toEqual(["a", "b"])
    expect(c.input).toBe(input)
    const noFormat = cmd({ format: undefined })
    expect(noFormat.format).toBe("")
    expect(noFormat.sinkDestination).toEqual({ case: undefined })
  })
})
