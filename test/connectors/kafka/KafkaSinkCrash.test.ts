/**
 * The transactional Kafka sink under SIGKILL: a child process (`sinkChild.ts`) copies a topic to
 * another through `kafka.transactional.exactlyOnce`, and dies by SIGKILL — just before the
 * checkpoint's commit log is written (the batch's Kafka transaction committed, the checkpoint
 * unaware), right after the offset log is written, or whenever the parent decides while
 * a transaction is in flight. The restarted child finishes the copy. Read with
 * `isolation.level=read_committed`, the output must be the input exactly: no record missing, none
 * twice, in order.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { connect, type TestKafka, uniqueTopic } from "./helpers.ts"

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), "sinkChild.ts")
const RECORDS = 21

let k: TestKafka
let root = ""
beforeAll(async () => {
  k = await connect()
  root = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-kafka-crash-"))
})
afterAll(async () => {
  await k?.close()
  if (root !== "") fs.rmSync(root, { recursive: true, force: true })
})

interface ChildExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stderr: string
}

/** Runs the child; `killWhen` (polled every 20 ms) makes the parent SIGKILL it. */
const runChild = (
  inTopic: string,
  outTopic: string,
  workDir: string,
  kill?: string,
  killWhen?: () => Promise<boolean>
): Promise<ChildExit> =>
  new Promise((resolve, reject) => {
    const args = [CHILD, k.brokers, inTopic, outTopic, workDir]
    if (kill !== undefined) args.push(kill)
    const child = spawn(process.execPath, args, {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, NODE_COMPILE_CACHE: path.join(os.tmpdir(), "tributary-crash-compile-cache") }
    })
    let stderr = ""
    let timer: NodeJS.Timeout | undefined
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk
    })
    child.on("error", reject)
    child.on("close", (code, signal) => {
      if (timer !== undefined) clearTimeout(timer)
      resolve({ code, signal, stderr })
    })
    if (killWhen !== undefined) {
      const poll = async () => {
        if (child.exitCode !== null || child.signalCode !== null) return
        if (await killWhen().catch(() => false)) child.kill("SIGKILL")
        else timer = setTimeout(poll, 20)
      }
      timer = setTimeout(poll, 20)
    }
  })

/** Offsets written to the topic so far, committed or not (the high watermark). */
const highWatermark = async (topic: string): Promise<number> =>
  (await k.admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0)

const setup = async (name: string) => {
  const inTopic = uniqueTopic(`crash-in-${name}`)
  const outTopic = uniqueTopic(`crash-out-${name}`)
  await k.createTopic(inTopic, 1)
  await k.createTopic(outTopic, 1)
  const values = Array.from({ length: RECORDS }, (_, i) => `r${i}`)
  await k.send(inTopic, 0, values)
  return { inTopic, outTopic, values, workDir: path.join(root, name) }
}

const finishAndCheck = async (s: Awaited<ReturnType<typeof setup>>) => {
  const clean = await runChild(s.inTopic, s.outTopic, s.workDir)
  expect(clean.stderr).not.toContain("child failed")
  expect(clean.code).toBe(0)
  const out = await k.readAll(s.outTopic, true)
  expect(out.map((r) => r.value)).toEqual(s.values)
}

describe("transactional kafka sink under SIGKILL", () => {
  for (const [point, batch] of [
    ["beforeCommit", 1],
    ["afterOffsets", 2]
  ] as const) {
    // two or three child processes, each starting Node and a Kafka client: minutes on a loaded machine
    it(`killed at ${point}:${batch}, restarted: every record exactly once`, { timeout: 180_000 }, async () => {
      const s = await setup(`${point}${batch}`)
      const killed = await runChild(s.inTopic, s.outTopic, s.workDir, `${point}:${batch}`)
      expect(killed.signal).toBe("SIGKILL")
      if (point === "beforeCommit") {
        // Batch 1's transaction committed before the kill: batches 0 and 1 (7 records each).
        const committed = await k.readAll(s.outTopic, true)
        expect(committed.map((r) => r.value)).toEqual(s.values.slice(0, 14))
      }
      await finishAndCheck(s)
    })
  }

  it("killed by the parent while a transaction is in flight, then restarted: exactly once", { timeout: 180_000 }, async () => {
    const s = await setup("parent")
    // Killed as soon as anything reached the output: at that moment batch 0's transaction is
    // open or committing.
    const first = await runChild(
      s.inTopic,
      s.outTopic,
      s.workDir,
      undefined,
      async () => (await highWatermark(s.outTopic)) > 0
    )
    // The child may also have finished before the kill landed; either way the result must hold.
    expect(first.signal === "SIGKILL" || first.code === 0).toBe(true)
    await finishAndCheck(s)
  })
})
