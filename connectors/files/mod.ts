/**
 * The file formats `json`, `csv`, `text`, `parquet`, `orc` and `avro`: batch reads (`spark.read`), batch writes
 * (`df.write`), streaming sources (`spark.readStream`, Spark's `FileStreamSource`) and streaming
 * sinks (`writeStream.format(...)`, Spark's `FileStreamSink`). Importing this module registers
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
import { registerBatchFormat, registerBatchWriteFormat } from "../../core/Formats.ts"
import { registerSinkFormat, registerSourceFormat } from "../../core/Streaming.ts"
import { AvroFormat, AvroWriterFormat } from "./avro/AvroFormat.ts"
import { CsvFormat } from "./CsvFormat.ts"
import { fileBatchWriteFormat } from "./FileBatchWriter.ts"
import { fileStreamSinkFormat } from "./FileStreamSink.ts"
import { fileStreamSourceFormat } from "./FileStreamSource.ts"
import { CsvWriterFormat, JsonWriterFormat, ParquetWriterFormat, TextWriterFormat } from "./FileWriters.ts"
import { JsonFormat } from "./JsonFormat.ts"
import { OrcFormat, OrcWriterFormat } from "./orc/OrcFormat.ts"
import { ParquetFormat } from "./ParquetFormat.ts"
import { TextFormat } from "./TextFormat.ts"

export { AvroFormat, AvroWriterFormat } from "./avro/AvroFormat.ts"
export { CsvFormat } from "./CsvFormat.ts"
export { fileBatchWriteFormat } from "./FileBatchWriter.ts"
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
 * Registers the file formats: in the batch format and batch writer registries
 * (`core/Formats.ts`) and as streaming sources and sinks (`core/Streaming.ts`).
 */
export const registerFileFormats = (): void => {
  for (const format of [JsonFormat, CsvFormat, TextFormat, ParquetFormat, OrcFormat, AvroFormat]) {
    registerBatchFormat(format)
    registerSourceFormat(fileStreamSourceFormat(format))
  }
  for (const writer of [JsonWriterFormat, CsvWriterFormat, TextWriterFormat, ParquetWriterFormat, OrcWriterFormat, AvroWriterFormat]) {
    registerSinkFormat(fileStreamSinkFormat(writer))
    registerBatchWriteFormat(fileBatchWriteFormat(writer))
  }
}
