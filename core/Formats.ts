/**
 * The format registry: connectors register the batch formats (`spark.read.format(name)`) they
 * provide under Spark's names; the session looks them up. A connector is a folder plus one
 * registry line in the composition root (`mod.ts`), so nothing in `structured/` changes when
 * one is added.
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import type { StructType } from "./DataType.ts"
import type { AnalysisError, ConnectorError } from "./Errors.ts"
import type { InternalRow } from "./Row.ts"

/** Options as Spark passes them: case-insensitive keys, string values. */
export type Options = Readonly<Record<string, string>>

/** A bounded (batch) format: `json`, `csv`, `parquet`, `text`, … */
export interface BatchFormat {
  readonly name: string
  /**
   * The schema of the data at `paths`: the user's schema checked against the options, or one
   * inferred from the data (Spark's rules for the format). Fails with `AnalysisError`
   * (`PathNotFound`, a bad option) or `ConnectorError` (unreadable data).
   */
  readonly resolveSchema: (
    paths: ReadonlyArray<string>,
    userSchema: StructType | undefined,
    options: Options
  ) => Effect.Effect<StructType, AnalysisError | ConnectorError>
  /** Reads all rows at `paths` as internal rows of `schema` (the result of `resolveSchema`). */
  readonly read: (
    paths: ReadonlyArray<string>,
    schema: StructType,
    options: Options
  ) => Effect.Effect<ReadonlyArray<InternalRow>, ConnectorError>
}

const batchFormats = new Map<string, BatchFormat>()

/** Registers a batch format under its name (lower case); a later registration replaces an earlier one. */
export const registerBatchFormat = (format: BatchFormat): void => {
  batchFormats.set(format.name.toLowerCase(), format)
}

export const lookupBatchFormat = (name: string): BatchFormat | undefined => batchFormats.get(name.toLowerCase())

export const batchFormatNames = (): ReadonlyArray<string> => [...batchFormats.keys()].sort()

/** Looks an option up the way Spark does: keys are case-insensitive. */
export const option = (options: Options, key: string): string | undefined => {
  const k = key.toLowerCase()
  for (const [name, value] of Object.entries(options)) if (name.toLowerCase() === k) return value
  return undefined
}
