/**
 * The public face of `structured/`: the session, DataFrames and their readers.
 *
 * @since 0.1.0
 */
export { DataFrame, type MapRow } from "./api/DataFrame.ts"
export { DataFrameReader, type SchemaInput } from "./api/DataFrameReader.ts"
export { GroupedData } from "./api/GroupedData.ts"
export type { ColumnName, ColumnPath, ColumnRef, JoinHow, Row, SelectRow } from "./api/RowTypes.ts"
export { type RuntimeConfig, Session, type SessionOptions, type SessionShape } from "./api/Session.ts"
