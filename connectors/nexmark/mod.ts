/**
 * The `nexmark` source: the Nexmark benchmark's people, auctions and bids, generated as Apache
 * Beam's reference generator does, for `spark.readStream.format("nexmark")` and
 * `spark.read.format("nexmark")`. Importing this module registers nothing; the composition root
 * calls `registerNexmark()`.
 *
 * @example
 * ```ts
 * import { registerNexmark } from "./connectors/nexmark/mod.ts"
 * registerNexmark()
 * // spark.readStream.format("nexmark") and spark.read.format("nexmark") now resolve
 * ```
 * @since 0.1.0
 */
import { registerBatchFormat } from "../../core/Formats.ts"
import { registerSourceFormat } from "../../core/Streaming.ts"
import { NexmarkBatch, NexmarkSource } from "./NexmarkSource.ts"

export { JavaRandom } from "./JavaRandom.ts"
export {
  AUCTION,
  BEAM_BASE_TIME_MS,
  BID,
  DEFAULT_GENERATOR_CONFIG,
  interEventDelayUs,
  lastBase0AuctionId,
  lastBase0PersonId,
  NexmarkGenerator,
  type NexmarkGeneratorConfig,
  PERSON
} from "./NexmarkGenerator.ts"
export {
  AuctionType,
  BidType,
  type NexmarkOptions,
  NexmarkOptionsSchema,
  NexmarkSchema,
  PersonType,
  parseNexmarkOptions
} from "./NexmarkOptions.ts"
export { availableEvents, NexmarkBatch, NexmarkOffsetSchema, NexmarkSource } from "./NexmarkSource.ts"

/** Registers `nexmark` as a streaming source and as a batch format. */
export const registerNexmark = (): void => {
  registerSourceFormat(NexmarkSource)
  registerBatchFormat(NexmarkBatch)
}
