/**
 * The `socket` source: text lines from a TCP server, for demos (it cannot replay). Importing this
 * module registers nothing; the composition root calls `registerSocket()`.
 *
 * @example
 * ```ts
 * import { registerSocket } from "./connectors/socket/mod.ts"
 * registerSocket()
 * // spark.readStream.format("socket").option("host", "localhost").option("port", 9999).load()
 * ```
 * @since 0.1.0
 */
import { registerSourceFormat } from "../../core/Streaming.ts"
import { SocketSource } from "./SocketSource.ts"

export { parseSocketOptions, type SocketOptions, SocketSource, socketSchema } from "./SocketSource.ts"

/**
 * The class name Spark 2.x knew the socket source by: Spark's
 * `DataSource.backwardCompatibilityMap` still resolves it (TextSocketStreamSuite's "backward
 * compatibility with old path").
 */
export const SOCKET_LEGACY_NAME = "org.apache.spark.sql.execution.streaming.TextSocketSourceProvider"

/** Registers `socket` in the streaming source registry (`core/Streaming.ts`). */
export const registerSocket = (): void => {
  registerSourceFormat(SocketSource)
  registerSourceFormat({ ...SocketSource, name: SOCKET_LEGACY_NAME })
}
