/**
 * What the streaming file sink and the batch writer (`df.write`) share: Spark's output layout.
 *
 * - Rows are grouped by their partition values into `key=value` folders (Spark's
 *   `FileFormatWriter` with `DynamicPartitionDataSingleWriter`): names and values escaped by
 *   `ExternalCatalogUtils.escapePathName`, a null or empty value as `__HIVE_DEFAULT_PARTITION__`,
 *   values as `Cast(value AS STRING)` in the session's UTC;
 * - each folder gets `part-00000-<uuid>-c000<ext>` files, or `part-00000-<uuid>.c000<ext>` in
 *   partition folders, as Spark 4.2 names them (one task, the file counter restarting in each
 *   folder, split at `maxRecordsPerFile`; a batch write's files share its job's UUID, the
 *   streaming sink's get one each);
 * - an unpartitioned write of no rows still writes one (empty) file, as Spark's first task does
 *   (SPARK-23271: the file carries the schema for formats like Parquet and Avro).
 *
 * @since 0.5.0
 */
import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import * as Cast from "../../core/Cast.ts"
import * as T from "../../core/DataType.ts"
import { AnalysisError, type ConnectorError } from "../../core/Errors.ts"
import { type Options, option } from "../../core/Formats.ts"
import type { InternalRow } from "../../core/Row.ts"

/** Hive's name of the folder of null and empty partition values. */
export const DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"

/**
 * Spark's `ExternalCatalogUtils.escapePathName`: control characters, DEL, the slash and
 * the characters of `"#%'*:=?\{[]^` become `%XX`.
 */
export const escapePathName = (s: string): string => {
  let out = ""
  for (const ch of s) {
    const c = ch.charCodeAt(0)
    const special = (c >= 0x01 && c <= 0x1f) || c === 0x7f || ch === "/" || `"#%'*:=?\\{[]^`.includes(ch)
    out += special ? `%${c.toString(16).toUpperCase().padStart(2, "0")}` : ch
  }
  return out
}

/** Spark's `PartitioningUtils.canPartitionOn`: atomic types only. */
export const canPartitionOn = (t: T.DataType): boolean =>
  t._tag !== "struct" && t._tag !== "array" && t._tag !== "map" && t._tag !== "calendarInterval"

/** How the rows of a write split into partition folders and data columns. */
export interface PartitionLayout {
  /** The data columns: the schema without the partition columns. */
  readonly dataSchema: T.StructType
  /** The rows by partition folder (`""` without partitioning), data columns only. */
  readonly group: (rows: ReadonlyArray<InternalRow>) => Map<string, Array<InternalRow>>
}

/** The layout of rows of `schema` partitioned by the columns at `partitionIndexes`. */
export const partitionLayout = (schema: T.StructType, partitionIndexes: ReadonlyArray<number>): PartitionLayout => {
  const fields = schema.fields
  const partSet = new Set(partitionIndexes)
  const dataIdx = fields.map((_, i) => i).filter((i) => !partSet.has(i))
  const names = partitionIndexes.map((i) => escapePathName(fields[i].name))
  const strings = partitionIndexes.map((i) => Cast.toStringFunction(fields[i].dataType))
  return {
    dataSchema: T.struct(dataIdx.map((i) => fields[i])),
    group: (rows) => {
      const byDir = new Map<string, Array<InternalRow>>()
      if (partitionIndexes.length === 0) {
        byDir.set("", rows as Array<InternalRow>)
        return byDir
      }
      for (const r of rows) {
        let dir = ""
        for (let k = 0; k < partitionIndexes.length; k++) {
          const v = r[partitionIndexes[k]]
          const s = v === null || v === undefined ? "" : strings[k](v)
          dir += `${k > 0 ? "/" : ""}${names[k]}=${s.length === 0 ? DEFAULT_PARTITION_NAME : escapePathName(s)}`
        }
        const data = new Array<unknown>(dataIdx.length)
        for (let j = 0; j < dataIdx.length; j++) data[j] = r[dataIdx[j]]
        const g = byDir.get(dir)
        if (g === undefined) byDir.set(dir, [data])
        else g.push(data)
      }
      return byDir
    }
  }
}

/**
 * Spark's file name of a task's output file (`FileFormatDataWriter`'s writers with the commit
 * protocol's `getFilename`), as Spark 4.2 writes them (checked by
 * test/connect/WriteInterop.test.ts): `part-00000-<uuid>-c000<ext>` from the single-folder
 * writer, `part-00000-<uuid>.c000<ext>` from the partitioned one. `uuid` is the job's for a batch
 * write (`HadoopMapReduceCommitProtocol`), a new one per file for the streaming sink
 * (`ManifestFileCommitProtocol`).
 */
export const partFileName = (
  counter: number,
  extension: string,
  partitioned: boolean,
  uuid: string = randomUUID()
): string => `part-00000-${uuid}${partitioned ? "." : "-"}c${String(counter).padStart(3, "0")}${extension}`

/**
 * Spark's `maxRecordsPerFile` (the option, else `spark.sql.files.maxRecordsPerFile`; 0 or
 * negative: no limit), as a number of rows (`Infinity` for none).
 */
export const maxRecordsPerFile = (
  format: string,
  options: Options,
  conf: ReadonlyMap<string, string> | undefined
): number | AnalysisError => {
  const text = option(options, "maxRecordsPerFile") ?? conf?.get("spark.sql.files.maxRecordsPerFile")
  if (text === undefined) return Number.POSITIVE_INFINITY
  if (!/^[+-]?\d+$/.test(text.trim())) {
    return new AnalysisError({
      reason: "InvalidArgument",
      errorClass: "INVALID_OPTION",
      message: `Invalid value '${text}' for the ${format} option 'maxRecordsPerFile': it must be an integer.`
    })
  }
  const n = Number(text.trim())
  return n > 0 ? n : Number.POSITIVE_INFINITY
}

/**
 * Writes each folder's rows as files of at most `maxRecords` rows through `writeFile(dir,
 * counter, rows)`, in order, and returns what each call returned.
 */
export const writeGroups = <A>(
  byDir: ReadonlyMap<string, ReadonlyArray<InternalRow>>,
  maxRecords: number,
  writeFile: (dir: string, counter: number, rows: ReadonlyArray<InternalRow>) => Effect.Effect<A, ConnectorError>
): Effect.Effect<Array<A>, ConnectorError> =>
  Effect.gen(function* () {
    const out: Array<A> = []
    for (const [dir, rows] of byDir) {
      // Spark's first task writes a file even for an empty, unpartitioned write
      if (rows.length === 0) {
        if (dir === "") out.push(yield* writeFile(dir, 0, rows))
        continue
      }
      // Spark's `DynamicPartitionDataSingleWriter`: the counter restarts in each partition folder
      let counter = 0
      for (let from = 0; from < rows.length; from += maxRecords) {
        const chunk = from === 0 && rows.length <= maxRecords ? rows : rows.slice(from, from + maxRecords)
        out.push(yield* writeFile(dir, counter++, chunk))
      }
    }
    return out
  })
