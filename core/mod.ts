/**
 * The public face of `core/`: data types, columns and `F`, durations, errors and the format
 * registry that connectors plug into.
 *
 * @since 0.1.0
 */
export { Column, type ColumnOrName, type ColumnOrValue, type Primitive, type WindowSpecLike } from "./Column.ts"
export * as DataType from "./DataType.ts"
export type { StructField, StructType } from "./DataType.ts"
export { type IntervalString, type IntervalUnit, parseDurationMs, parseInterval } from "./Durations.ts"
export {
  AnalysisError,
  CheckpointError,
  ConnectorError,
  IllegalStateError,
  ParseException,
  StateStoreError,
  StreamingQueryError
} from "./Errors.ts"
export * as F from "./F.ts"
export {
  type BatchFormat,
  type BatchWriteFormat,
  type BatchWriteRequest,
  registerBatchFormat,
  registerBatchWriteFormat
} from "./Formats.ts"
export { structTypeOf } from "./RowSchema.ts"
export type { MicroBatchSource, OutputMode, ReadLimit, Sink, SinkFormat, SourceFormat } from "./Streaming.ts"
export { registerSinkFormat, registerSourceFormat } from "./Streaming.ts"
export { Trigger, type TriggerInterval } from "./Trigger.ts"
export { Window, WindowSpec } from "./Window.ts"
