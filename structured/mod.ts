/**
 * The public face of `structured/`: the session, DataFrames and their readers.
 *
 * @since 0.1.0
 */
export { DataFrame, type MapRow } from "./api/DataFrame.ts"
export { DataFrameReader, type ReadFormat, type SchemaInput } from "./api/DataFrameReader.ts"
export { DataFrameWriter, type SaveMode, type WriteFormat } from "./api/DataFrameWriter.ts"
export { GroupedData } from "./api/GroupedData.ts"
export {
  type ExpiredTimerInfo,
  type InitialStateSource,
  type ListState,
  type MapState,
  StatefulProcessor,
  type StatefulProcessorHandle,
  type StatefulProcessorLike,
  TimeMode,
  type TimerValues,
  TTLConfig,
  type TransformWithStateOptions,
  transformWithState,
  type ValueState
} from "./contracts/StatefulProcessor.ts"
export {
  FlatMapGroupsWithStateUserFuncError,
  type GroupState,
  GroupStateError,
  GroupStateImpl,
  GroupStateTimeout,
  TestGroupState
} from "./contracts/GroupState.ts"
export {
  type FlatMapGroupsWithStateOptions,
  KeyValueGroupedDataset,
  type KeyRow,
  type MapGroupsWithStateOptions
} from "./api/KeyValueGroupedDataset.ts"
export type { ColumnName, ColumnPath, ColumnRef, JoinHow, Row, SelectRow } from "./api/RowTypes.ts"
export { type OpenSession, type RuntimeConfig, Session, type SessionOptions, type SessionShape } from "./api/Session.ts"
export { JUPYTER_DISPLAY, type MimeBundle } from "./api/Display.ts"
export { DataStreamReader, type StreamReadFormat } from "./api/DataStreamReader.ts"
export { DataStreamWriter, type ForeachWriter, type StreamWriteFormat } from "./api/DataStreamWriter.ts"
export { MemoryStream } from "./api/MemoryStream.ts"
export type { StreamingQuery } from "./contracts/StreamingQuery.ts"
export type { StreamingQueryManager } from "./api/StreamingQueryManager.ts"
export {
  progressFromJson,
  progressJson,
  statusJson,
  type SinkProgress,
  type SourceProgress,
  type StateOperatorProgress,
  type StreamingQueryProgress,
  type StreamingQueryStatus
} from "./contracts/StreamingQueryProgress.ts"
export type {
  QueryIdleEvent,
  QueryProgressEvent,
  QueryStartedEvent,
  QueryTerminatedEvent,
  StreamingQueryListener
} from "./contracts/StreamingQueryListener.ts"
