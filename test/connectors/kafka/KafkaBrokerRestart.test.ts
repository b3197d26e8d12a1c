/**
 * A broker that goes away mid-query. A second broker of its own (`scripts/kafka.sh start
 * restart-<pid>`, its own port and folder) serves a query from one topic to another through the
 * transactional sink; the broker is killed (SIGKILL) and brought back on the same port and data
 * while the query runs. The query retries with backoff, goes on when the broker is back, and the
 * output holds every record once. With few retries, a broker that stays away fails the query with
 * a `ConnectorError` that says so.
 *
 * Slow by nature (two broker starts, one of them a recovery), so it has its own timeouts.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Cause, Effect, Exit } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { F, Session } from "../../../mod.ts"
import { connect, type TestKafka, uniqueTopic } from "./helpers.ts"

const SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../scripts/kafka.sh")
const NAME = `restart-${process.pid}`

const kafkaSh = (...args: ReadonlyArray<string>): Promise<string> =>
  new Promise((resolve, reject) => {
    execFile("bash", [SCRIPT, ...args], (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`kafka.sh ${args.join(" ")}: ${stderr}`))
      else resolve(stdout.trim().split("\n").pop() ?? "")
    })
  })

let brokers = ""
let k: TestKafka
let root = ""
beforeAll(async () => {
  brokers = await kafkaSh("start", NAME)
  k = await connect(brokers)
  root = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-kafka-restart-"))
}, 180_000)
afterAll(async () => {
  await k?.close().catch(() => {})
  await kafkaSh("stop", NAME)
  if (root !== "") fs.rmSync(root, { recursive: true, force: true })
}, 60_000)

const until = async (what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> => {
  const deadline = Date.now() + ms
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe("a broker stopped and restarted mid-query", () => {
  it("the query retries, resumes when the broker is back, and writes every record once", async () => {
    const inTopic = uniqueTopic("restart-in")
    const outTopic = uniqueTopic("restart-out")
    await k.createTopic(inTopic, 1)
    await k.createTopic(outTopic, 1)
    const program = Effect.gen(function* () {
      const spark = yield* Session
      const query = yield* spark.readStream
        .format("kafka")
        .option("kafka.bootstrap.servers", brokers)
        .option("subscribe", inTopic)
        .option("startingOffsets", "earliest")
        .option("fetchOffset.numRetries", "40")
        .option("fetchOffset.retryIntervalMs", "200")
        .load()
        .select(F.col("value"))
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", brokers)
        .option("topic", outTopic)
        .option("kafka.transactional.exactlyOnce", "true")
        .option("kafka.retries", "40")
        .option("kafka.retry.backoff.ms", "200")
        .option("checkpointLocation", path.join(root, "chk"))
        .start()
      yield* Effect.promise(() => k.send(inTopic, 0, ["a", "b", "c"]))
      yield* query.processAllAvailable()
      yield* Effect.promise(() => kafkaSh("kill", NAME))
      // The query polls a dead broker now; bring it back on the same port and data.
      yield* Effect.sleep("1 second")
      yield* Effect.promise(() => kafkaSh("start", NAME))
      yield* Effect.promise(() => k.send(inTopic, 0, ["d", "e"]))
      yield* Effect.promise(() =>
        until(
          "the output to catch up",
          async () =>
            (await k.admin.fetchTopicOffsets(outTopic))[0].high !== "0" && (await k.readAll(outTopic, true)).length >= 5
        )
      )
      yield* query.processAllAvailable()
      expect(yield* query.isActive()).toBe(true)
      yield* query.stop()
    })
    await Effect.runPromise(program.pipe(Effect.provide(Session.layer())))
    const out = await k.readAll(outTopic, true)
    expect(out.map((r) => r.value)).toEqual(["a", "b", "c", "d", "e"])
  }, 240_000)

  it("a broker that stays away fails the query with a ConnectorError saying so", async () => {
    const topic = uniqueTopic("restart-gone")
    await k.createTopic(topic, 1)
    await kafkaSh("kill", NAME)
    {
      const program = Effect.gen(function* () {
        const spark = yield* Session
        const query = yield* spark.readStream
          .format("kafka")
          .option("kafka.bootstrap.servers", brokers)
          .option("subscribe", topic)
          .option("fetchOffset.numRetries", "2")
          .option("fetchOffset.retryIntervalMs", "100")
          .load()
          .writeStream.format("noop")
          .start()
        return yield* Effect.exit(query.awaitTermination())
      })
      const exit = await Effect.runPromise(program.pipe(Effect.provide(Session.layer())))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        const error = Cause.squash(exit.cause) as { message?: string; cause?: { _tag?: string; message?: string } }
        const inner =
          error.cause?._tag === "ConnectorError" ? error.cause : (error as { _tag?: string; message?: string })
        expect(inner._tag).toBe("ConnectorError")
        expect(inner.message).toContain("failed after 3 attempts")
        expect(inner.message).toContain(`the broker(s) ${brokers} could not be reached`)
      }
    }
  }, 180_000)
})
