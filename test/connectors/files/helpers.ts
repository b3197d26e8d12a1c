import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import type * as T from "../../../core/DataType.ts"
import type { BatchFormat, Options } from "../../../core/Formats.ts"
import type { InternalRow } from "../../../core/Row.ts"

/** A fresh temporary directory. */
export const tempDir = (): Promise<string> => fs.mkdtemp(path.join(os.tmpdir(), "tributary-files-"))

/** Removes a temporary directory and everything in it. */
export const removeDir = (dir: string): Promise<void> => fs.rm(dir, { recursive: true, force: true })

/** Writes files (relative path → content) below `root`, creating directories. */
export const writeFiles = async (root: string, files: Record<string, string | Uint8Array>): Promise<void> => {
  for (const [rel, content] of Object.entries(files)) {
    const p = path.join(root, rel)
    await fs.mkdir(path.dirname(p), { recursive: true })
    await fs.writeFile(p, content)
  }
}

/** Resolves the schema and reads the rows, as `spark.read...load(paths)` would. */
export const load = async (
  format: BatchFormat,
  paths: ReadonlyArray<string>,
  options: Options = {},
  userSchema?: T.StructType
): Promise<{ readonly schema: T.StructType; readonly rows: ReadonlyArray<InternalRow> }> => {
  const schema = await Effect.runPromise(format.resolveSchema(paths, userSchema, options))
  const rows = await Effect.runPromise(format.read(paths, schema, options))
  return { schema, rows }
}

/** The failure of an effect (the test fails if it succeeds). */
export const failure = <A, E>(effect: Effect.Effect<A, E>): Promise<E> => Effect.runPromise(Effect.flip(effect))

/** `name: type (nullable)` lines, for compact schema assertions. */
export const describeSchema = (s: T.StructType): Array<string> =>
  s.fields.map((f) => `${f.name}: ${typeString(f.dataType)}${f.nullable ? "" : " not null"}`)

const typeString = (t: T.DataType): string => {
  switch (t._tag) {
    case "struct":
      return `struct<${t.fields.map((f) => `${f.name}:${typeString(f.dataType)}`).join(",")}>`
    case "array":
      return `array<${typeString(t.elementType)}>`
    case "map":
      return `map<${typeString(t.keyType)},${typeString(t.valueType)}>`
    default:
      return t._tag
  }
}
