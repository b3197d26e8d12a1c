/**
 * Nexmark q12, processing-time windows (Flink's `q12.sql`): how many bids each bidder makes in
 * each 10-second window of processing time.
 *
 *   CREATE VIEW B AS SELECT *, PROCTIME() AS p_time FROM bid;
 *   SELECT bidder, count(*) AS bid_count, window_start AS starttime, window_end AS endtime
 *   FROM TABLE(TUMBLE(TABLE B, DESCRIPTOR(p_time), INTERVAL '10' SECOND))
 *   GROUP BY bidder, window_start, window_end
 *
 * Spark's processing time is `current_timestamp()`, the micro-batch's timestamp (from Effect's
 * `Clock` here): every row of a batch has the same one. A watermark of 0 seconds on it lets the
 * window aggregation run in append mode and emit a window once a later batch starts after its
 * end; Flink fires processing-time windows on its wall clock instead.
 */
import { F } from "../../mod.ts"
import { bid, type Frame, type NexmarkQuery } from "./Nexmark.ts"

export const q12: NexmarkQuery = {
  name: "q12",
  title: "processing-time windows",
  outputMode: "append",
  build: (events: Frame, options) => {
    const withTime = bid(events).withColumn("p_time", options?.processingTime ?? F.current_timestamp())
    const timed = withTime.isStreaming ? withTime.withWatermark("p_time", "0 seconds") : withTime
    return timed
      .groupBy(F.col("bidder"), F.window("p_time", "10 seconds"))
      .agg(F.count("*").as("bid_count"))
      .select(
        F.col("bidder"),
        F.col("bid_count"),
        F.col("window.start").as("starttime"),
        F.col("window.end").as("endtime")
      )
  },
  isFinal: (row, watermarkMs) => (row.endtime as Date).getTime() <= watermarkMs,
  difference:
    "processing time is the micro-batch's timestamp (current_timestamp()), with a watermark of 0 seconds on it so that windows are emitted in append mode once a later batch starts after their end."
}
