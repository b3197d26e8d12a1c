/**
 * The schema of a Parquet file read synchronously from its footer (the Thrift compact-encoded
 * `FileMetaData` before the trailing `PAR1`), typed as `ParquetFormat` types it through DuckDB
 * (`state/DuckDB.ts` `sparkTypeOf`). The streaming source needs it: Spark infers a parquet
 * source's schema when the DataFrame is defined (`readStream...load()` with
 * `spark.sql.streaming.schemaInference`), and `load()` is synchronous while DuckDB is not.
 *
 * @example
 * ```ts
 * import { parquetFooterSchema } from "./ParquetFooter.ts"
 * const schema = parquetFooterSchema("/data/part-00000.parquet") // StructType, or an error message
 * ```
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as T from "../../core/DataType.ts"

/** A Thrift compact-protocol reader over a byte array. */
class Compact {
  readonly bytes: Uint8Array
  pos = 0

  constructor(bytes: Uint8Array) {
    this.bytes = bytes
  }

  byte(): number {
    if (this.pos >= this.bytes.length) throw new Error("truncated footer")
    return this.bytes[this.pos++]
  }

  varint(): number {
    let result = 0
    let mul = 1
    for (;;) {
      const b = this.byte()
      result += (b & 0x7f) * mul
      if ((b & 0x80) === 0) return result
      mul *= 128
    }
  }

  zigzag(): number {
    const n = this.varint()
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2
  }

  binary(): Uint8Array {
    const n = this.varint()
    const out = this.bytes.subarray(this.pos, this.pos + n)
    this.pos += n
    return out
  }

  /** Skips a value of compact type `type`. */
  skip(type: number): void {
    switch (type) {
      case 1:
      case 2:
        return // booleans of struct fields live in the field header
      case 3:
        this.pos += 1
        return
      case 4:
      case 5:
      case 6:
        this.varint()
        return
      case 7:
        this.pos += 8
        return
      case 8:
        this.binary()
        return
      case 9:
      case 10: {
        const [size, elem] = this.listHeader()
        for (let i = 0; i < size; i++) {
          if (elem === 1 || elem === 2) this.pos += 1
          else this.skip(elem)
        }
        return
      }
      case 11: {
        const size = this.varint()
        if (size === 0) return
        const kv = this.byte()
        for (let i = 0; i < size; i++) {
          this.skip(kv >> 4)
          this.skip(kv & 0x0f)
        }
        return
      }
      case 12:
        this.struct(() => false)
        return
      default:
        throw new Error(`unknown Thrift type ${type}`)
    }
  }

  listHeader(): [number, number] {
    const h = this.byte()
    const size = h >> 4 === 15 ? this.varint() : h >> 4
    return [size, h & 0x0f]
  }

  /** Reads a struct, giving each field to `onField` (which returns whether it consumed it). */
  struct(onField: (id: number, type: number) => boolean): void {
    let last = 0
    for (;;) {
      const h = this.byte()
      if (h === 0) return
      const type = h & 0x0f
      const delta = h >> 4
      const id = delta === 0 ? this.zigzag() : last + delta
      last = id
      if (!onField(id, type)) this.skip(type)
    }
  }
}

/** One `SchemaElement` of the footer. */
interface Element {
  type?: number
  repetition?: number
  name: string
  numChildren: number
  converted?: number
  /** The field id of the `LogicalType` union member. */
  logical?: number
  /** `LogicalType.INTEGER`: bit width and sign. */
  intBits?: number
  intSigned?: boolean
}

const readElement = (r: Compact): Element => {
  const e: Element = { name: "", numChildren: 0 }
  r.struct((id, type) => {
    switch (id) {
      case 1:
        e.type = r.zigzag()
        return true
      case 3:
        e.repetition = r.zigzag()
        return true
      case 4:
        e.name = new TextDecoder().decode(r.binary())
        return true
      case 5:
        e.numChildren = r.zigzag()
        return true
      case 6:
        e.converted = r.zigzag()
        return true
      case 10:
        if (type !== 12) return false
        r.struct((lid, ltype) => {
          e.logical = lid
          if (lid === 10 && ltype === 12) {
            r.struct((iid, itype) => {
              if (iid === 1 && itype === 3) {
                e.intBits = r.byte()
                return true
              }
              if (iid === 2 && (itype === 1 || itype === 2)) {
                e.intSigned = itype === 1
                return true
              }
              return false
            })
            return true
          }
          return false
        })
        return true
      default:
        return false
    }
  })
  return e
}

/** A node of the schema tree. */
interface Node {
  readonly e: Element
  readonly children: Array<Node>
}

const isString = (e: Element): boolean =>
  e.converted === 0 || e.converted === 4 || e.converted === 19 || e.logical === 1 || e.logical === 4 || e.logical === 12

const isDecimal = (e: Element): boolean => e.converted === 5 || e.logical === 5

/** The Spark type of a primitive column, as DuckDB reads it and `sparkTypeOf` maps it. */
const primitiveType = (e: Element): T.DataType => {
  if (isDecimal(e)) return T.DoubleType // DuckDB DECIMAL -> double
  switch (e.type) {
    case 0:
      return T.BooleanType
    case 1: {
      if (e.converted === 6 || e.logical === 6) return T.DateType
      if (e.converted === 7 || e.logical === 7) return T.StringType // TIME
      // UINT_32 is DuckDB's UINTEGER, a long
      if (e.converted === 13 || (e.logical === 10 && e.intBits === 32 && e.intSigned === false)) return T.LongType
      return T.IntegerType
    }
    case 2:
      if (e.converted === 9 || e.converted === 10 || e.logical === 8) return T.TimestampType
      if (e.converted === 8 || e.logical === 7) return T.StringType // TIME
      return T.LongType
    case 3:
      return T.TimestampType // INT96
    case 4:
    case 5:
      return T.DoubleType
    case 6:
      return isString(e) ? T.StringType : T.BinaryType
    case 7:
      if (e.logical === 14) return T.StringType // UUID
      if (e.converted === 21) return T.CalendarIntervalType
      return T.BinaryType
    default:
      return T.StringType
  }
}

const REPEATED = 2

/** The Spark type of a node, ignoring its own repetition. */
const nodeType = (n: Node): T.DataType => {
  const e = n.e
  if (n.children.length === 0 && e.numChildren === 0) return primitiveType(e)
  // LIST: `group (LIST) { repeated group list { element } }`, or the legacy two-level forms
  if (e.converted === 3 || e.logical === 3) {
    const rep = n.children[0]
    if (rep === undefined) return T.array(T.StringType)
    if (rep.children.length === 1 && rep.e.name !== "array" && !rep.e.name.endsWith("_tuple")) {
      return T.array(fieldType(rep.children[0]))
    }
    return T.array(nodeType(rep))
  }
  // MAP: `group (MAP) { repeated group key_value { key; value } }`
  if (e.converted === 1 || e.converted === 2 || e.logical === 2) {
    const kv = n.children[0]
    if (kv !== undefined && kv.children.length === 2) {
      return T.map(fieldType(kv.children[0]), fieldType(kv.children[1]))
    }
  }
  return T.struct(n.children.map((c) => T.field(c.e.name, fieldType(c), true)))
}

/** A field's type: a repeated field outside a LIST annotation is an array of its type. */
const fieldType = (n: Node): T.DataType => (n.e.repetition === REPEATED ? T.array(nodeType(n)) : nodeType(n))

/**
 * The Spark schema of the Parquet file at `path` (every field nullable, as Spark reads files),
 * or a message saying why the footer cannot be read.
 */
export const parquetFooterSchema = (path: string): T.StructType | string => {
  let fd: number | undefined
  try {
    fd = fs.openSync(path, "r")
    const size = fs.fstatSync(fd).size
    if (size < 12) return `${path} is not a Parquet file (too small)`
    const tail = Buffer.alloc(8)
    fs.readSync(fd, tail, 0, 8, size - 8)
    if (tail.toString("latin1", 4, 8) !== "PAR1") return `${path} is not a Parquet file (no PAR1 footer)`
    const metaLength = tail.readUInt32LE(0)
    if (metaLength + 8 > size) return `${path} has a corrupt footer length`
    const meta = Buffer.alloc(metaLength)
    fs.readSync(fd, meta, 0, metaLength, size - 8 - metaLength)
    const r = new Compact(meta)
    let elements: Array<Element> | undefined
    r.struct((id, type) => {
      if (id !== 2 || type !== 9) return false
      const [n] = r.listHeader()
      elements = []
      for (let i = 0; i < n; i++) elements.push(readElement(r))
      return true
    })
    if (elements === undefined || elements.length === 0) return `${path} has no schema in its footer`
    let next = 1
    const build = (e: Element): Node => {
      const children: Array<Node> = []
      for (let i = 0; i < e.numChildren && next < elements!.length; i++) children.push(build(elements![next++]))
      return { e, children }
    }
    const root = build(elements[0])
    return T.struct(root.children.map((c) => T.field(c.e.name, fieldType(c), true)))
  } catch (e) {
    return `${path}: ${e instanceof Error ? e.message : String(e)}`
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}
