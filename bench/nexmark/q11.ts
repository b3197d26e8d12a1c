/**
 * Nexmark q11, user sessions (Flink's `q11.sql`): how many bids each bidder makes in each session
 * of activity, a session ending after 10 seconds without a bid.
 *
 *   SELECT B.bidder, count(*) AS bid_count,
 *          SESSION_START(B.dateTime, INTERVAL '10' SECOND) AS starttime,
 *          SESSION_END(B.dateTime, INTERVAL '10' SECOND) AS endtime
 *   FROM bid B GROUP BY B.bidder, SESSION(B.dateTime, INTERVAL '10' SECOND)
 *
 * Append mode on Flink's watermark: a session is emitted once the watermark passes its end.
 */
import { F } from "../../mod.ts"
import { bid, type Frame, type NexmarkQuery, withWatermark } from "./Nexmark.ts"

export const q11: NexmarkQuery = {
  name: "q11",
  title: "user sessions",
  outputMode: "append",
  build: (events: Frame) =>
    bid(withWatermark(events))
      .groupBy(F.col("bidder"), F.session_window("dateTime", "10 seconds").as("session"))
      .agg(F.count("*").as("bid_count"))
      .select(
        F.col("bidder"),
        F.col("bid_count"),
        F.col("session.start").as("starttime"),
        F.col("session.end").as("endtime")
      ),
  isFinal: (row, watermarkMs) => (row.endtime as Date).getTime() <= watermarkMs
}
