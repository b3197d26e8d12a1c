/**
 * Deno smoke test of the `kinesis` source: the AWS SDK v3 Kinesis client (over `node:http`)
 * loads and runs in Deno. Starts the local Kinesis of the Node tests (kinesalite, under Node:
 * test/kinesis/kinesalite.cjs) unless `TRIBUTARY_KINESIS_ENDPOINT` names one, writes records
 * with PutRecords and reads them with `readStream.format("kinesis")`.
 */
import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import {
  CreateStreamCommand,
  DescribeStreamSummaryCommand,
  KinesisClient,
  PutRecordsCommand
} from "@aws-sdk/client-kinesis"
import { NodeHttpHandler } from "@smithy/node-http-handler"
import { Effect } from "effect"
import { F, Session } from "../../mod.ts"

const ROOT = new URL("../..", import.meta.url).pathname
const given = Deno.env.get("TRIBUTARY_KINESIS_ENDPOINT")

/** Starts kinesalite under Node; its endpoint and a stop function. */
const startKinesalite = (): Promise<{ endpoint: string; stop: () => Promise<void> }> =>
  new Promise((resolve, reject) => {
    const child = spawn("node", [`${ROOT}test/kinesis/kinesalite.cjs`], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.on("data", (chunk: Uint8Array) => {
      out += new TextDecoder().decode(chunk)
      const m = /^(\d+)\n/.exec(out)
      if (m !== null) {
        resolve({
          endpoint: `http://127.0.0.1:${m[1]}`,
          stop: () =>
            new Promise<void>((done) => {
              // The child's stdout closes when it exits.
              child.stdout.on("close", () => done())
              child.kill()
            })
        })
      }
    })
    child.stdout.on("close", () => {
      if (!/^\d+\n/.test(out)) reject(new Error(`test/kinesis/kinesalite.cjs ended before listening: ${out}`))
    })
  })

Deno.test({
  name: "the kinesis source reads records written with PutRecords",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const server = given === undefined ? await startKinesalite() : { endpoint: given, stop: () => Promise.resolve() }
    const client = new KinesisClient({
      endpoint: server.endpoint,
      region: "us-east-1",
      credentials: { accessKeyId: "test", secretAccessKey: "test" },
      requestHandler: new NodeHttpHandler()
    })
    try {
      const stream = `deno-${crypto.randomUUID().slice(0, 8)}`
      await client.send(new CreateStreamCommand({ StreamName: stream, ShardCount: 2 }))
      while (
        (await client.send(new DescribeStreamSummaryCommand({ StreamName: stream }))).StreamDescriptionSummary
          ?.StreamStatus !== "ACTIVE"
      ) {
        // kinesalite of the tests makes streams ACTIVE at once; this loop ends on the next call.
      }
      await client.send(
        new PutRecordsCommand({
          StreamName: stream,
          Records: ["a", "b", "c"].map((d, i) => ({ Data: new TextEncoder().encode(d), PartitionKey: `k${i}` }))
        })
      )
      const program = Effect.gen(function* () {
        const spark = yield* Session
        const rows: Array<string> = []
        const q = yield* spark.readStream
          .format("kinesis")
          .options({
            streamName: stream,
            endpointUrl: server.endpoint,
            region: "us-east-1",
            awsAccessKey: "test",
            awsSecretKey: "test",
            initialPosition: "trim_horizon"
          })
          .load()
          .select(F.col("data").cast("string").as("data"))
          .writeStream.foreachBatch((b) =>
            Effect.map(b.collect(), (rs) => {
              for (const r of rs) rows.push(r.data as string)
            })
          )
          .start()
        yield* q.processAllAvailable()
        yield* q.stop()
        return rows.sort()
      })
      assert.deepEqual(await Effect.runPromise(program.pipe(Effect.provide(Session.layer()))), ["a", "b", "c"])
    } finally {
      client.destroy()
      await server.stop()
    }
  }
})
