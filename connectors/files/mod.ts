/**
 * The file formats `json`, `csv`, `text`, `parquet` and `orc`: batch reads (`spark.read`), streaming
 * sources (`spark.readStream`, Spark's `FileStreamSource`) and streaming sinks
 * (`writeStream.format(...)`, Spark's `FileStreamSink`). Importing this module registers
 * nothing; the composition root calls `registerFileFormats()`.
 *
 * @example
 * ```ts
 * import { registerFileFormats } from "./connectors/files/mod.ts"
 * registerFileFormats()
 * // spark.read.format("json"), .csv(...), .text(...), .parquet(...),
 * // spark.readStream.format("json")... and df.writeStream.format("parquet")... now resolve
 * ```
 * @since 0.1.0
 */
import { registerBatchFormat } from "../../core/Formats.ts"
import { registerSinkFormat, registerSourceFormat } from "../../core/Streaming.ts"
import { CsvFormat } from "./CsvFormat.ts"
import { fileStreamSinkFormat } from "./FileStreamSink.ts"
import { fileStreamSourceFormat } from "./FileStreamSource.ts"
import { CsvWriterFormat, JsonWriterFormat, ParquetWriterFormat, TextWriterFormat } from "./FileWriters.ts"
import { JsonFormat } from "./JsonFormat.ts"
import { OrcFormat, OrcWriterFormat } from "./orc/OrcFormat.ts"
import { ParquetFormat } from "./ParquetFormat.ts"
import { TextFormat } from "./TextFormat.ts"

export { CsvFormat } from "./CsvFormat.ts"
export { type FileIndex, type InputFile, listFiles } from "./FileListing.ts"
export { type FileSinkHooks, fileStreamSinkFormat } from "./FileStreamSink.ts"
export { type FileStreamSourceOffset, fileStreamSourceFormat } from "./FileStreamSource.ts"
export { type FileStreamOptions, parseFileStreamOptions } from "./FileStreamOptions.ts"
export { type LogFiles, NodeLogFiles, type SinkFileStatus, type SourceFileEntry } from "./FileStreamLog.ts"
export { CsvWriterFormat, JsonWriterFormat, ParquetWriterFormat, TextWriterFormat } from "./FileWriters.ts"
export { JsonFormat } from "./JsonFormat.ts"
export {
  encodeOrc,
  OrcFormat,
  OrcWriterFormat,
  type OrcWriterSettings,
  orcWriterSettings,
  writeOrcFile
} from "./orc/OrcFormat.ts"
export { ParquetFormat } from "./ParquetFormat.ts"
export { TextFormat } from "./TextFormat.ts"

/**
 * Registers the five file formats: in the batch format registry (`core/Formats.ts`) and as
 * streaming sources and sinks (`core/Streaming.ts`).
 */
export const registerFileFormats = (): void => {
  for (const format of [JsonFormat, CsvFormat, TextFormat, ParquetFormat, OrcFormat]) {
    registerBatchFormat(format)
    registerSourceFormat(fileStreamSourceFormat(format))
  }
  for (const writer of [JsonWriterFormat, CsvWriterFormat, TextWriterFormat, ParquetWriterFormat, OrcWriterFormat]) {
    registerSinkFormat(fileStreamSinkFormat(writer))
  }
}
