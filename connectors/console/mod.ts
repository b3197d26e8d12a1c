/**
 * The `console` sink. Importing this module registers nothing; the composition root calls
 * `registerConsoleSink()`.
 *
 * @example
 * ```ts
 * import { registerConsoleSink } from "./connectors/console/mod.ts"
 * registerConsoleSink()
 * // df.writeStream.format("console") now resolves
 * ```
 * @since 0.1.0
 */
import { registerSinkFormat } from "../../core/Streaming.ts"
import { ConsoleSink } from "./ConsoleSink.ts"

export { type ConsoleOptions, ConsoleSink, consoleBatchText, parseConsoleOptions } from "./ConsoleSink.ts"

/** Registers `console` in the streaming sink registry (`core/Streaming.ts`). */
export const registerConsoleSink = (): void => {
  registerSinkFormat(ConsoleSink)
}
