/**
 * Beyond Spark: says, before any restart, whether a query's plan can continue from a
 * checkpoint — the same stateful operators with the same ids, names and stores, and state
 * schemas the restart's compatibility check will accept (`tributary checkpoint check`).
 *
 * It reads what the engine wrote when the checkpointed query last started
 * (`<checkpoint>/state/<operatorId>/_metadata/reader`) and plans the new query the way
 * `start()` would, without running it.
 *
 * @since 0.1.0
 */
import { Effect, Result } from "effect"
import type { CheckpointFileSystem } from "../../core/CheckpointFileSystem.ts"
import type { AnalysisError, CheckpointError } from "../../core/Errors.ts"
import * as T from "../../core/DataType.ts"
import type * as Plan from "../../core/LogicalPlan.ts"
import * as Optimizer from "../../core/optimizer/Optimizer.ts"
import { checkCompatibility } from "../../state/StateSchemaCompatibility.ts"
import * as Planner from "../physical/Planner.ts"
import type { OperatorStateSchema } from "../physical/stateful/StatefulContext.ts"
import { builtInReaderSpec, type StoreDecoder, type StoreReaderSpec } from "../physical/stateful/StateReaderSpec.ts"
import { statefulOperators } from "../physical/stateful/StatefulOperators.ts"

/** The verdict and one line per operator or store. */
export interface CheckReport {
  readonly compatible: boolean
  readonly lines: ReadonlyArray<string>
}

interface StoredOperator {
  readonly operatorName: string
  readonly stores: ReadonlyArray<StoreReaderSpec>
}

const readStored = (
  fs: CheckpointFileSystem,
  checkpoint: string
): Effect.Effect<Map<number, StoredOperator>, CheckpointError> =>
  Effect.gen(function* () {
    const out = new Map<number, StoredOperator>()
    const stateDir = fs.join(checkpoint, "state")
    for (const name of yield* fs.list(stateDir)) {
      if (!/^\d+$/.test(name)) continue
      const text = yield* fs.readText(fs.join(stateDir, name, "_metadata", "reader"))
      if (text === undefined) continue
      try {
        const parsed = JSON.parse(text) as StoredOperator
        if (Array.isArray(parsed.stores)) out.set(Number(name), parsed)
      } catch {
        // An unreadable description counts as missing; the check reports it.
      }
    }
    return out
  })

/**
 * The schema as the user knows its columns: an aggregation stores its aggregates under their
 * expression names (`count(1)`, `sum(value)`); the reader description knows their aliases, and
 * the report uses those. Names do not take part in the comparison (it is by position).
 */
const withOutputNames = (schema: OperatorStateSchema, decoder: StoreDecoder | undefined): OperatorStateSchema => {
  if (decoder?.kind !== "aggregate") return schema
  const fields = schema.valueSchema.fields
  const first = fields.length - decoder.aggregates.length
  if (first < 0) return schema
  return {
    ...schema,
    valueSchema: T.struct(fields.map((f, i) => (i < first ? f : T.field(decoder.aggregates[i - first].field.name, f.dataType, f.nullable))))
  }
}

/**
 * Compares the stateful operators of `analyzed` (a streaming plan) with the checkpoint's.
 *
 * @since 0.1.0
 */
export const checkAgainstCheckpoint = (
  fs: CheckpointFileSystem,
  checkpoint: string,
  analyzed: Result.Result<Plan.LogicalPlan, AnalysisError>
): Effect.Effect<CheckReport, AnalysisError | CheckpointError> =>
  Effect.gen(function* () {
    const plan = yield* Effect.fromResult(analyzed)
    const physical = Planner.plan(Optimizer.optimize(plan), { streaming: true })
    const planned = statefulOperators(physical)
    const stored = yield* readStored(fs, fs.resolve(checkpoint))
    const lines: Array<string> = []
    let compatible = true
    const fail = (line: string) => {
      compatible = false
      lines.push(`INCOMPATIBLE ${line}`)
    }
    if (planned.length === 0 && stored.size === 0) lines.push("ok: no stateful operators in the plan or the checkpoint")
    for (const op of planned) {
      const old = stored.get(op.operatorId)
      if (old === undefined) {
        if (stored.size > 0) fail(`operator ${op.operatorId} ${op.name}: the checkpoint has no state for it (a stateful operator was added)`)
        else lines.push(`ok: operator ${op.operatorId} ${op.name} starts with empty state (the checkpoint has none yet)`)
        continue
      }
      if (old.operatorName !== op.name) {
        fail(`operator ${op.operatorId}: the plan has ${op.name} where the checkpoint has ${old.operatorName}`)
        continue
      }
      for (const store of op.stores) {
        const s = old.stores.find((x) => x.storeName === store.storeName)
        if (s === undefined) {
          fail(`operator ${op.operatorId} ${op.name} store '${store.storeName}': not in the checkpoint`)
          continue
        }
        const error = checkCompatibility(
          withOutputNames(s.schema, s.decoder),
          withOutputNames(store.schema, builtInReaderSpec(op.node, store.storeName)?.decoder),
          { operatorId: op.operatorId, storeName: store.storeName }
        )
        if (error !== undefined) fail(error.message)
        else lines.push(`ok: operator ${op.operatorId} ${op.name} store '${store.storeName}'`)
      }
    }
    for (const [id, old] of stored) {
      if (!planned.some((op) => op.operatorId === id)) {
        fail(`operator ${id} ${old.operatorName}: in the checkpoint but not in the plan (a stateful operator was removed)`)
      }
    }
    return { compatible, lines }
  })
