/**
 * Spark's `Dataset.showString`: the ASCII table `show()` prints, byte for byte for the common
 * cases (Spark 4: nulls print as `NULL`, structs as `{a, b}`, arrays as `[a, b]`, maps as
 * `{k -> v}`, cells longer than 20 characters cut to 17 plus `...` when truncating, right-aligned
 * when truncating and left-aligned otherwise, columns at least 3 wide).
 *
 * @since 0.1.0
 */
import type * as T from "./DataType.ts"
import { formatDate, formatDouble, formatTimestamp } from "./ExpressionName.ts"
import type { InternalRow } from "./Row.ts"

/** How one internal value of type `t` prints in a cell (Spark's `ToPrettyString`). */
export const cellString = (t: T.DataType, v: unknown): string => {
  if (v === null || v === undefined) return "NULL"
  switch (t._tag) {
    case "double":
      return formatDouble(v as number)
    case "timestamp":
      return formatTimestamp(v as number)
    case "date":
      return formatDate(v as number)
    case "boolean":
      return v ? "true" : "false"
    case "binary":
      return `[${Array.from(v as Uint8Array, (b) => b.toString(16).toUpperCase().padStart(2, "0")).join(" ")}]`
    case "array":
      return `[${(v as ReadonlyArray<unknown>).map((x) => cellString(t.elementType, x)).join(", ")}]`
    case "struct":
      return `{${t.fields.map((f, i) => cellString(f.dataType, (v as InternalRow)[i])).join(", ")}}`
    case "map":
      return `{${[...(v as Map<unknown, unknown>)]
        .map(([k, x]) => `${cellString(t.keyType, k)} -> ${cellString(t.valueType, x)}`)
        .join(", ")}}`
    default:
      return String(v)
  }
}

/** Display width: full-width (East Asian) characters count twice, as Spark's `stringHalfWidth`. */
const width = (s: string): number => {
  let w = 0
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0
    w +=
      (c >= 0x1100 && c <= 0x115f) ||
      (c >= 0x2e80 && c <= 0xa4cf) ||
      (c >= 0xac00 && c <= 0xd7a3) ||
      (c >= 0xf900 && c <= 0xfaff) ||
      (c >= 0xfe30 && c <= 0xfe4f) ||
      (c >= 0xff00 && c <= 0xff60) ||
      (c >= 0xffe0 && c <= 0xffe6) ||
      (c >= 0x20000 && c <= 0x3fffd)
        ? 2
        : 1
  }
  return w
}

const padLeft = (s: string, n: number): string => " ".repeat(Math.max(0, n - width(s))) + s
const padRight = (s: string, n: number): string => s + " ".repeat(Math.max(0, n - width(s)))

/** Spark's `SchemaUtils.escapeMetaCharacters`: control characters would break the table. */
const escapeMeta = (s: string): string =>
  s
    .replaceAll("\n", "\\n")
    .replaceAll("\r", "\\r")
    .replaceAll("\t", "\\t")
    .replaceAll("\f", "\\f")
    .replaceAll("\b", "\\b")
    .replaceAll("\u000B", "\\v")
    .replaceAll("\u0007", "\\a")

const truncateCell = (raw: string, truncate: number): string => {
  const s = escapeMeta(raw)
  if (truncate <= 0 || s.length <= truncate) return s
  return truncate < 4 ? s.slice(0, truncate) : `${s.slice(0, truncate - 3)}...`
}

/**
 * The text `show(numRows, truncate, vertical)` prints. `rows` may hold one more row than
 * `numRows`, which says that there is more data (the "only showing top" footer).
 */
export const showString = (
  schema: T.StructType,
  rows: ReadonlyArray<InternalRow>,
  numRows: number,
  truncate: number,
  vertical = false
): string => {
  const hasMore = rows.length > numRows
  const shown = rows.slice(0, numRows)
  const header = schema.fields.map((f) => truncateCell(f.name, truncate))
  const cells = shown.map((r) => schema.fields.map((f, i) => truncateCell(cellString(f.dataType, r[i]), truncate)))
  const footer = hasMore ? `only showing top ${numRows} ${numRows === 1 ? "row" : "rows"}\n` : ""
  if (!vertical) {
    const widths = header.map((h, i) => Math.max(3, width(h), ...cells.map((c) => width(c[i]))))
    const sep = `${widths.map((w) => `+${"-".repeat(w)}`).join("")}+\n`
    const line = (cs: ReadonlyArray<string>): string =>
      `${cs.map((c, i) => `|${truncate > 0 ? padLeft(c, widths[i]) : padRight(c, widths[i])}`).join("")}|\n`
    let out = sep + line(header) + sep
    for (const c of cells) out += line(c)
    out += sep
    return out + footer
  }
  // Spark's vertical layout: one block per row, `-RECORD i` headers padded with dashes to the
  // name and value widths plus 5 (" | " and the two outer spaces); both widths are at least 3.
  const nameWidth = Math.max(3, ...header.map(width))
  const valueWidth = Math.max(3, ...cells.flatMap((c) => c.map(width)))
  if (cells.length === 0) return "(0 rows)\n"
  let out = ""
  cells.forEach((c, i) => {
    const head = `-RECORD ${i}`
    out += `${head}${"-".repeat(Math.max(0, nameWidth + valueWidth + 5 - head.length))}\n`
    header.forEach((h, j) => {
      out += ` ${padRight(h, nameWidth)} | ${padRight(c[j], valueWidth)} \n`
    })
  })
  return out + footer
}
