/**
 * Partition discovery from `key=value` directory names, Spark's `PartitioningUtils`: each leaf
 * directory is walked up to its base path collecting `key=value` segments; value types are
 * inferred (`spark.sql.sources.partitionColumnTypeInference.enabled`, on by default) and
 * widened across directories; a column the user's schema names takes the user's type.
 *
 * @since 0.1.0
 */
import * as nodePath from "node:path"
import * as Cast from "../../core/Cast.ts"
import * as T from "../../core/DataType.ts"
import { AnalysisError } from "../../core/Errors.ts"
import type { InternalRow } from "../../core/Row.ts"
import { javaParseDouble, javaParseInt, javaParseLong, scalaToBoolean } from "./Inference.ts"

/** Hive's name for a null partition value. */
export const DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"

/** The partition columns and each leaf directory's values (internal values of those columns). */
export interface PartitionSpec {
  readonly schema: T.StructType
  /** Leaf directory (absolute) → its partition values, in `schema` order. */
  readonly values: ReadonlyMap<string, InternalRow>
}

/** The types partition inference distinguishes; `decimal` (integers beyond long) reads as double. */
type PartType = "null" | "int" | "long" | "decimal" | "double" | "date" | "timestamp" | "string"

/** Spark's `ExternalCatalogUtils.unescapePathName`: `%XX` (hex) becomes that character. */
export const unescapePathName = (s: string): string => {
  if (!s.includes("%")) return s
  let out = ""
  let i = 0
  while (i < s.length) {
    const c = s[i]
    if (c === "%" && /^[0-9a-fA-F]{2}$/.test(s.slice(i + 1, i + 3))) {
      out += String.fromCharCode(Number.parseInt(s.slice(i + 1, i + 3), 16))
      i += 3
    } else {
      out += c
      i++
    }
  }
  return out
}

const toTimestamp = Cast.castFunction(T.StringType, T.TimestampType)
const toDate = Cast.castFunction(T.StringType, T.DateType)
// Spark's `timestampPartitionPattern` "yyyy-MM-dd HH:mm:ss[.S]" and `DateFormatter.defaultPattern`
const timestampPartitionRe = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,9})?$/
const datePartitionRe = /^\d{4}-\d{2}-\d{2}$/

/** Spark's `inferPartitionColumnValue`: int, long, decimal, double, timestamp, date, string. */
const inferPartType = (raw: string): PartType => {
  if (javaParseInt(raw) !== null) return "int"
  if (javaParseLong(raw) !== null) return "long"
  // java.math.BigDecimal with scale <= 0 and at most 38 digits: decimal(p, 0)
  if (/^[+-]?\d{1,38}$/.test(raw)) return "decimal"
  if (javaParseDouble(raw) !== null) return "double"
  const unescaped = unescapePathName(raw)
  if (timestampPartitionRe.test(unescaped) && toTimestamp(unescaped) !== null) return "timestamp"
  if (datePartitionRe.test(raw) && toDate(raw) !== null) return "date"
  return raw === DEFAULT_PARTITION_NAME ? "null" : "string"
}

const partRank = (t: PartType): number => (t === "int" ? 1 : t === "long" ? 2 : t === "decimal" ? 3 : 0)

/**
 * Spark's `findWiderTypeForPartitionColumn`: like `findWiderTypeForTwo`, except that a double
 * meeting a long or a decimal becomes a string (no precision loss).
 */
const widerPartType = (a: PartType, b: PartType): PartType => {
  if (a === b) return a
  if (a === "null") return b
  if (b === "null") return a
  if ((a === "double" && (b === "long" || b === "decimal")) || (b === "double" && (a === "long" || a === "decimal"))) {
    return "string"
  }
  if (a === "double" && b === "int") return "double"
  if (b === "double" && a === "int") return "double"
  const ra = partRank(a)
  const rb = partRank(b)
  if (ra > 0 && rb > 0) return ra >= rb ? a : b
  if ((a === "date" && b === "timestamp") || (a === "timestamp" && b === "date")) return "timestamp"
  return "string"
}

const sparkTypeOfPart = (t: PartType): T.DataType => {
  switch (t) {
    case "int":
      return T.IntegerType
    case "long":
      return T.LongType
    case "decimal":
    case "double":
      return T.DoubleType
    case "date":
      return T.DateType
    case "timestamp":
      return T.TimestampType
    // a column that is null in every directory reads as string
    case "null":
    case "string":
      return T.StringType
  }
}

/** Spark's `castPartValueToDesiredType`; `undefined` when the raw value does not convert. */
const castPartValue = (t: T.DataType, raw: string): unknown => {
  if (raw === DEFAULT_PARTITION_NAME) return null
  switch (t._tag) {
    case "null":
      return null
    case "string":
      return unescapePathName(raw)
    case "integer":
      return javaParseInt(raw) ?? undefined
    case "long":
      return javaParseLong(raw) ?? undefined
    case "double":
      return javaParseDouble(raw) ?? undefined
    case "date":
      return toDate(raw)
    case "timestamp": {
      const ts = toTimestamp(unescapePathName(raw))
      if (ts !== null) return ts
      const d = toDate(raw)
      return d === null ? null : (d as number) * 86_400_000
    }
    case "boolean":
      return scalaToBoolean(raw) ?? undefined
    case "binary":
      return new TextEncoder().encode(raw)
    default:
      return undefined
  }
}

interface ParsedDir {
  readonly columns: ReadonlyArray<readonly [string, string]> | undefined
  readonly basePath: string
}

/** Spark's `parsePartition`: walks from a leaf directory up to a base path. */
const parseLeafDir = (dir: string, basePaths: ReadonlySet<string>): ParsedDir | AnalysisError => {
  const columns: Array<readonly [string, string]> = []
  let current = dir
  let finished = nodePath.dirname(current) === current
  while (!finished) {
    if (basePaths.has(current)) {
      finished = true
    } else {
      const name = nodePath.basename(current)
      const eq = name.indexOf("=")
      let found = false
      if (eq >= 0) {
        const column = unescapePathName(name.slice(0, eq))
        const raw = name.slice(eq + 1)
        if (column.length === 0) {
          return partitionError(`Empty partition column name in '${name}'`)
        }
        if (raw.length === 0) {
          return partitionError(`Empty partition column value in '${name}'`)
        }
        columns.push([column, raw])
        found = true
      }
      const parent = nodePath.dirname(current)
      finished = (!found && columns.length > 0) || parent === current
      if (!finished) current = parent
    }
  }
  if (columns.length === 0) return { columns: undefined, basePath: dir }
  return { columns: columns.reverse(), basePath: current }
}

const partitionError = (message: string): AnalysisError => new AnalysisError({ reason: "InvalidArgument", message })

/**
 * Discovers the partition columns of `leafDirs` (directories holding data files) below
 * `basePaths`. Fails like Spark's assertions when directories disagree on their layout or
 * column names, or when a value does not convert to the user's type for that column.
 */
export const discoverPartitions = (
  leafDirs: ReadonlyArray<string>,
  basePaths: ReadonlySet<string>,
  userSchema: T.StructType | undefined
): PartitionSpec | AnalysisError => {
  const parsed: Array<readonly [string, ParsedDir]> = []
  for (const dir of leafDirs) {
    const p = parseLeafDir(dir, basePaths)
    if (p instanceof AnalysisError) return p
    parsed.push([dir, p])
  }
  const withValues = parsed.filter(([, p]) => p.columns !== undefined)
  if (withValues.length === 0) return { schema: T.struct([]), values: new Map() }

  const discoveredBases = [...new Set(parsed.map(([, p]) => p.basePath.toLowerCase()))]
  if (discoveredBases.length !== 1) {
    return partitionError(
      `Conflicting directory structures detected. Suspicious paths:\n\t${discoveredBases.map((b) => `file:${b}`).join("\n\t")}\n\nIf provided paths are partition directories, please set "basePath" in the options of the data source to specify the root directory of the table. If there are multiple root directories, please load them separately and then union them.`
    )
  }

  const nameLists = withValues.map(([, p]) => p.columns!.map(([n]) => n))
  const distinct = [...new Set(nameLists.map((ns) => ns.map((n) => n.toLowerCase()).join(", ")))]
  if (distinct.length !== 1) {
    const lists = [...new Set(nameLists.map((ns) => ns.join(", ")))]
    return partitionError(
      `Conflicting partition column names detected:\n${lists.map((l, i) => `\tPartition column name list #${i}: ${l}`).join("\n")}\n\nFor partitioned table directories, data files should only live in leaf directories.\nAnd directories at the same level should have the same partition column name.\nPlease check the following directories for unexpected files or inconsistent partition column names:\n${withValues.map(([d]) => `\tfile:${d}`).join("\n")}`
    )
  }

  const names = nameLists[0]
  const userField = (name: string): T.StructField | undefined =>
    userSchema?.fields.find((f) => f.name.toLowerCase() === name.toLowerCase())
  const fields = names.map((name, i) => {
    const u = userField(name)
    if (u !== undefined) return T.field(u.name, u.dataType, true)
    let t: PartType = "null"
    let first = true
    for (const [, p] of withValues) {
      const raw = p.columns![i][1]
      const pt = inferPartType(raw)
      t = first ? pt : widerPartType(t, pt)
      first = false
    }
    return T.field(name, sparkTypeOfPart(t), true)
  })

  const values = new Map<string, InternalRow>()
  for (const [dir, p] of withValues) {
    const row: Array<unknown> = []
    for (let i = 0; i < fields.length; i++) {
      const raw = p.columns![i][1]
      const v = castPartValue(fields[i].dataType, raw)
      if (v === undefined) {
        return partitionError(
          `Failed to cast value \`${raw}\` to \`${T.simpleString(fields[i].dataType)}\` for partition column \`${fields[i].name}\``
        )
      }
      row.push(v)
    }
    values.set(dir, row)
  }
  return { schema: T.struct(fields), values }
}
