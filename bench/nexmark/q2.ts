/**
 * Nexmark q2, selection (Flink's `q2.sql`): the bids of every 123rd auction.
 *
 *   SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0
 */
import { F } from "../../mod.ts"
import { bid, type Frame, type NexmarkQuery } from "./Nexmark.ts"

export const q2: NexmarkQuery = {
  name: "q2",
  title: "selection",
  outputMode: "append",
  build: (events: Frame) => bid(events).where(F.col("auction").mod(123).eq(0)).select(F.col("auction"), F.col("price"))
}
