/**
 * Nexmark q1, currency conversion (Flink's `q1.sql`): bids with the price in euros.
 *
 *   SELECT auction, bidder, 0.908 * price AS price, dateTime, extra FROM bid
 */
import { F } from "../../mod.ts"
import { bid, type Frame, type NexmarkQuery } from "./Nexmark.ts"

export const q1: NexmarkQuery = {
  name: "q1",
  title: "currency conversion",
  outputMode: "append",
  build: (events: Frame) =>
    bid(events).select(
      F.col("auction"),
      F.col("bidder"),
      F.lit(0.908).multiply(F.col("price")).as("price"),
      F.col("dateTime"),
      F.col("extra")
    ),
  difference:
    "the euro price is a double (0.908 as a double literal times a bigint); Flink's SQL makes it DECIMAL(23, 3). tributary has no decimal type."
}
