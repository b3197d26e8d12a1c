/**
 * The `noop` sink. Importing this module registers nothing; the composition root calls
 * `registerNoopSink()`.
 *
 * @example
 * ```ts
 * import { registerNoopSink } from "./connectors/noop/mod.ts"
 * registerNoopSink()
 * // df.writeStream.format("noop") now resolves
 * ```
 * @since 0.1.0
 */
import { registerSinkFormat } from "../../core/Streaming.ts"
import { NoopSink } from "./NoopSink.ts"

export { NoopSink } from "./NoopSink.ts"

/** Registers `noop` in the streaming sink registry (`core/Streaming.ts`). */
export const registerNoopSink = (): void => {
  registerSinkFormat(NoopSink)
}
