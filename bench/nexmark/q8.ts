/**
 * Nexmark q8, monitor new users (Flink's `q8.sql`): the people who open an auction in the same
 * 10-second tumbling window in which they registered.
 *
 *   SELECT P.id, P.name, P.starttime
 *   FROM (SELECT id, name, window_start AS starttime, window_end AS endtime
 *         FROM TABLE(TUMBLE(TABLE person, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
 *         GROUP BY id, name, window_start, window_end) P
 *   JOIN (SELECT seller, window_start AS starttime, window_end AS endtime
 *         FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
 *         GROUP BY seller, window_start, window_end) A
 *   ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime
 *
 * The same in Spark: two window aggregations (append mode) joined on the key and the window, a
 * stream-stream join whose state the watermark in the join key bounds.
 */
import { F } from "../../mod.ts"
import { auction, type Frame, type NexmarkQuery, person, withWatermark } from "./Nexmark.ts"

export const q8: NexmarkQuery = {
  name: "q8",
  title: "monitor new users",
  outputMode: "append",
  build: (events: Frame) => {
    const timed = withWatermark(events)
    const p = person(timed)
      .groupBy(F.col("id"), F.col("name"), F.window("dateTime", "10 seconds").as("p_window"))
      .agg(F.count("*").as("p_count"))
    const a = auction(timed)
      .groupBy(F.col("seller"), F.window("dateTime", "10 seconds").as("a_window"))
      .agg(F.count("*").as("a_count"))
    return p
      .join(
        a,
        F.col("id")
          .eq(F.col("seller"))
          .and(F.col("p_window").eq(F.col("a_window"))),
        "inner"
      )
      .select(F.col("id"), F.col("name"), F.col("p_window.start").as("stime"))
  },
  isFinal: (row, watermarkMs) => (row.stime as Date).getTime() + 10_000 <= watermarkMs
}
