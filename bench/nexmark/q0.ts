/**
 * Nexmark q0, pass-through (Flink's `q0.sql`): every bid, its auction, bidder, price, time and
 * padding. Measures the cost of reading and writing the events.
 *
 *   SELECT auction, bidder, price, dateTime, extra FROM bid
 */
import { F } from "../../mod.ts"
import { bid, type Frame, type NexmarkQuery } from "./Nexmark.ts"

export const q0: NexmarkQuery = {
  name: "q0",
  title: "pass-through",
  outputMode: "append",
  build: (events: Frame) =>
    bid(events).select(F.col("auction"), F.col("bidder"), F.col("price"), F.col("dateTime"), F.col("extra"))
}
