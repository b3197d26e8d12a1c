/**
 * Issue #20, "Corrupted checkpoints, fuzzed": 520 seeded cases over every file kind of a
 * checkpoint (metadata, offsets, commits, the file source log, state metadata, the DuckDB
 * database and its write-ahead log, the file provider's deltas, snapshots and schema, the file
 * sink log, the receiver log, and the checksum files beside them), each truncated at a random
 * offset, bit-flipped, emptied, deleted or replaced by a future version's file. Every case must
 * recover exactly (or as the protocol allows) or fail before its first batch with a typed error
 * naming the file; see `checkpointFuzz.ts`. CI caps the real restarts at 35 to stay near a
 * minute; `npm run fuzz:checkpoint -- --cases 5000 --seed 1` runs a big count without a cap.
 * `CHECKPOINT_FUZZ_SEED` replays another seed.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { fuzz } from "./checkpointFuzz.ts"

const seed = Number(process.env.CHECKPOINT_FUZZ_SEED ?? "20")

describe("corrupted checkpoints, fuzzed", () => {
  it(
    `520 cases (seed ${seed}): each recovers exactly or fails before its first batch naming the file`,
    async () => {
      const report = await Effect.runPromise(fuzz({ cases: 520, seed, restartShare: 0.02, maxRestarts: 35 }))
      process.stdout.write(`checkpoint fuzz: ${JSON.stringify({ ...report, findings: report.findings.length })}\n`)
      expect(report.findings).toEqual([])
      expect(report.cases).toBe(520)
      // every kind was drawn, and every way out was taken
      expect(Object.keys(report.byKind).length).toBeGreaterThanOrEqual(20)
      expect(report.byVerdict["recovered exactly"]).toBeGreaterThan(0)
      expect(report.byVerdict["failed before the first batch, naming the file"]).toBeGreaterThan(0)
      expect(report.restarts).toBeGreaterThan(10)
    },
    240_000
  )
})
