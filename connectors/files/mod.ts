/**
 * The batch file formats: `json`, `csv`, `text` and `parquet`. Importing this module registers
 * nothing; the composition root calls `registerFileFormats()`.
 *
 * @example
 * ```ts
 * import { registerFileFormats } from "./connectors/files/mod.ts"
 * registerFileFormats()
 * // spark.read.format("json"), .csv(...), .text(...), .parquet(...) now resolve
 * ```
 * @since 0.1.0
 */
import { registerBatchFormat } from "../../core/Formats.ts"
import { CsvFormat } from "./CsvFormat.ts"
import { JsonFormat } from "./JsonFormat.ts"
import { ParquetFormat } from "./ParquetFormat.ts"
import { TextFormat } from "./TextFormat.ts"

export { CsvFormat } from "./CsvFormat.ts"
export { type FileIndex, type InputFile, listFiles } from "./FileListing.ts"
export { JsonFormat } from "./JsonFormat.ts"
export { ParquetFormat } from "./ParquetFormat.ts"
export { TextFormat } from "./TextFormat.ts"

/** Registers the four file formats in the batch format registry (`core/Formats.ts`). */
export const registerFileFormats = (): void => {
  registerBatchFormat(JsonFormat)
  registerBatchFormat(CsvFormat)
  registerBatchFormat(TextFormat)
  registerBatchFormat(ParquetFormat)
}
