/**
 * A Map-based state store provider for the stateful-operator tests: versioned by batch id like
 * the real providers (a store opens at version `batchId - 1`, its commit writes `batchId`), so
 * tests can run several batches, re-run a batch and restart with a new plan over the same state.
 *
 * It is strict where a real store could hide an operator bug: `get` of a key that was not
 * `load`ed throws, values are kept as JSON text (so a value that does not survive JSON fails the
 * test), and a store opened with another schema than the one it was created with fails.
 */
import { Effect } from "effect"
import { StateStoreError } from "../../../../core/Errors.ts"
import type { OutputMode } from "../../../../core/Streaming.ts"
import type {
  OperatorProgress,
  OperatorStateSchema,
  OperatorStateStore,
  StatefulContext
} from "../../../../structured/physical/stateful/StatefulContext.ts"

const storeId = (operatorId: number, storeName: string) => `${operatorId}/${storeName}`

export interface OpenRecord {
  readonly operatorId: number
  readonly storeName: string
  readonly version: number
}

export class InMemoryStateStoreProvider {
  /** Committed versions: store id → version → key → value (JSON text). */
  readonly versions = new Map<string, Map<number, Map<string, string>>>()
  readonly schemas = new Map<string, string>()
  readonly opened: Array<OpenRecord> = []
  aborted = 0

  open(
    operatorId: number,
    storeName: string,
    schema: OperatorStateSchema,
    batchId: number
  ): Effect.Effect<OperatorStateStore, StateStoreError> {
    return Effect.suspend(() => {
      const id = storeId(operatorId, storeName)
      const schemaText = JSON.stringify(schema)
      const known = this.schemas.get(id)
      if (known !== undefined && known !== schemaText) {
        return Effect.fail(
          new StateStoreError({
            reason: "SchemaIncompatible",
            operatorId,
            message: `operator ${operatorId} store ${storeName}: schema changed`
          })
        )
      }
      this.schemas.set(id, schemaText)
      const version = batchId - 1
      let all = this.versions.get(id)
      if (all === undefined) {
        all = new Map()
        this.versions.set(id, all)
      }
      const base = version < 0 ? new Map<string, string>() : all.get(version)
      if (base === undefined) {
        return Effect.fail(
          new StateStoreError({
            reason: "VersionNotFound",
            operatorId,
            message: `version ${version} of ${id} not found`
          })
        )
      }
      this.opened.push({ operatorId, storeName, version })
      const versions = all
      const loaded = new Set<string>()
      const changes = new Map<string, string | undefined>()
      let puts = 0
      let removes = 0
      let closed = false
      const current = (): Map<string, string> => {
        const m = new Map(base)
        for (const [k, v] of changes) {
          if (v === undefined) m.delete(k)
          else m.set(k, v)
        }
        return m
      }
      const usable = () => {
        if (closed) throw new Error(`store ${id} used after commit or abort`)
      }
      const store: OperatorStateStore = {
        version,
        load: (keys) =>
          Effect.sync(() => {
            usable()
            for (const k of keys) loaded.add(k)
          }),
        get: (key) => {
          usable()
          if (!loaded.has(key) && !changes.has(key)) throw new Error(`get("${key}") of a key that was not loaded`)
          const text = changes.has(key) ? changes.get(key) : base.get(key)
          return text === undefined ? undefined : JSON.parse(text)
        },
        put: (key, value) => {
          usable()
          const text = JSON.stringify(value)
          if (text === undefined) throw new Error(`put("${key}") of a value JSON cannot hold`)
          changes.set(key, text)
          puts++
        },
        remove: (key) => {
          usable()
          changes.set(key, undefined)
          removes++
        },
        scan: () =>
          Effect.sync(() => {
            usable()
            return [...current()].map(([k, v]) => [k, JSON.parse(v)] as const)
          }),
        commit: () =>
          Effect.sync(() => {
            usable()
            const next = current()
            versions.set(batchId, next)
            closed = true
            let bytes = 0
            for (const [k, v] of next) bytes += k.length + v.length
            return {
              numRowsTotal: next.size,
              numRowsUpdated: puts,
              numRowsRemoved: removes,
              commitTimeMs: 0,
              memoryUsedBytes: bytes
            }
          }),
        abort: () =>
          Effect.sync(() => {
            closed = true
            this.aborted++
          })
      }
      return Effect.succeed(store)
    })
  }

  /** The committed entries of a store at a version (the latest by default), values parsed. */
  entries(operatorId: number, version?: number, storeName = "default"): Map<string, unknown> {
    const all = this.versions.get(storeId(operatorId, storeName))
    if (all === undefined) return new Map()
    const v = version ?? Math.max(...all.keys())
    const m = all.get(v) ?? new Map<string, string>()
    return new Map([...m].map(([k, x]) => [k, JSON.parse(x)]))
  }

  /** A `StatefulContext` for one batch; progress reports go to `progress`. */
  context(options: {
    readonly batchId: number
    readonly outputMode: OutputMode
    readonly watermarkForLateEventsMs: number | undefined
    readonly watermarkForEvictionMs: number | undefined
    readonly progress: Map<number, OperatorProgress>
  }): StatefulContext {
    return {
      batchId: options.batchId,
      outputMode: options.outputMode,
      watermarkForLateEventsMs: options.watermarkForLateEventsMs,
      watermarkForEvictionMs: options.watermarkForEvictionMs,
      openStore: (operatorId, storeName, schema) => this.open(operatorId, storeName, schema, options.batchId),
      reportProgress: (operatorId, progress) => {
        options.progress.set(operatorId, progress)
      }
    }
  }
}
