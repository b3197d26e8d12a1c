/**
 * `spark.streams.addListener` on a remote session: Spark's listener events of remote queries,
 * through Spark Connect's listener bus, reach the same listener interface the local engine
 * calls (test/connect/globalSetup.ts starts the real Spark).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { create } from "@bufbuild/protobuf"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { StreamingQueryEventType, StreamingQueryListenerEventSchema } from "../../connect/gen/spark/connect/commands_pb.ts"
import { decodeListenerEvent } from "../../connect/RemoteListeners.ts"
import { type OpenSession, Session, type StreamingQueryListener, Trigger } from "../../mod.ts"
import { remoteAddress } from "./remote.ts"

let spark: OpenSession
let dir: string

beforeAll(async () => {
  spark = await Session.open({ remote: remoteAddress() })
  dir = await mkdtemp(join(tmpdir(), "remote-listeners-"))
  await writeFile(join(dir, "a.json"), ['{"k":"x","v":1}', '{"k":"y","v":2}', '{"k":"x","v":3}'].join("\n"))
})

afterAll(async () => {
  await spark?.close()
  await rm(dir, { recursive: true, force: true })
})

/** Waits (on real time: the events come from another process) until `p` holds, or fails after 30 s. */
const until = async (p: () => boolean, what: string): Promise<void> => {
  const deadline = Date.now() + 30_000
  while (!p()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const runQuery = (name: string) =>
  spark.run(
    Effect.gen(function* () {
      const q = yield* spark.readStream
        .schema("k STRING, v INT")
        .json(dir)
        .groupBy("k")
        .count()
        .writeStream.format("memory")
        .queryName(name)
        .outputMode("complete")
        .trigger(Trigger.AvailableNow())
        .option("checkpointLocation", join(dir, `_cp_${name}`))
        .start()
      yield* q.awaitTermination()
      return q
    })
  )

describe("listeners of a remote session", () => {
  it("hear started, progress and terminated events of remote queries, and nothing once removed", async () => {
    const events: Array<string> = []
    const progress: Array<{ batchId: number; numInputRows: number; id: string }> = []
    const listener: StreamingQueryListener = {
      onQueryStarted: (e) => void events.push(`started ${e.id} ${e.name}`),
      onQueryProgress: (e) => {
        events.push(`progress ${e.progress.batchId}`)
        progress.push({ batchId: e.progress.batchId, numInputRows: e.progress.numInputRows, id: e.progress.id })
      },
      onQueryTerminated: (e) => void events.push(`terminated ${e.id} ${e.exception}`)
    }
    await spark.run(spark.streams.addListener(listener))
    const q = await runQuery("listened")
    await until(() => events.some((e) => e.startsWith("terminated")), "the terminated event")
    expect(events[0]).toBe(`started ${q.id} listened`)
    expect(events[events.length - 1]).toBe(`terminated ${q.id} null`)
    expect(progress.length).toBeGreaterThan(0)
    expect(progress[0]).toEqual({ batchId: 0, numInputRows: 3, id: q.id })

    await spark.run(spark.streams.removeListener(listener))
    const before = events.length
    await runQuery("unlistened")
    // A query after the removal: give the bus a moment to (wrongly) deliver, then check nothing came.
    await new Promise((r) => setTimeout(r, 1_000))
    expect(events.length).toBe(before)
    // Two queries on a real Spark: slow on a busy two-core machine.
  }, 180_000)
})

describe("decodeListenerEvent", () => {
  it("reads Spark's idle and terminated events and skips what it cannot read", () => {
    const idle = decodeListenerEvent(
      create(StreamingQueryListenerEventSchema, {
        eventType: StreamingQueryEventType.QUERY_IDLE_EVENT,
        eventJson: '{"id":"a","runId":"b","timestamp":"2024-01-01T00:00:00.000Z"}'
      })
    )
    expect(idle).toEqual({ _tag: "idle", event: { id: "a", runId: "b", timestamp: "2024-01-01T00:00:00.000Z" } })
    const failed = decodeListenerEvent(
      create(StreamingQueryListenerEventSchema, {
        eventType: StreamingQueryEventType.QUERY_TERMINATED_EVENT,
        eventJson: '{"id":"a","runId":"b","exception":"boom","errorClassOnException":"STREAM_FAILED"}'
      })
    )
    expect(failed).toEqual({
      _tag: "terminated",
      event: { id: "a", runId: "b", exception: "boom", errorClassOnException: "STREAM_FAILED" }
    })
    const broken = decodeListenerEvent(
      create(StreamingQueryListenerEventSchema, { eventType: StreamingQueryEventType.QUERY_IDLE_EVENT, eventJson: "{" })
    )
    expect(broken).toBeUndefined()
  })
})
