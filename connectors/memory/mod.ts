/**
 * The `memory` sink. Importing this module registers nothing; the composition root calls
 * `registerMemorySink()`.
 *
 * @example
 * ```ts
 * import { registerMemorySink } from "./connectors/memory/mod.ts"
 * registerMemorySink()
 * // df.writeStream.format("memory").queryName("t") now resolves
 * ```
 * @since 0.1.0
 */
import { registerSinkFormat } from "../../core/Streaming.ts"
import { MemorySink } from "./MemorySink.ts"

export { MemorySink } from "./MemorySink.ts"

/** Registers `memory` in the streaming sink registry (`core/Streaming.ts`). */
export const registerMemorySink = (): void => {
  registerSinkFormat(MemorySink)
}
