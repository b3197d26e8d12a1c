/**
 * Nexmark q4, average price per category (Flink's `q4.sql`): the average closing price of the
 * auctions of each category, an auction's closing price being its highest bid while it is open.
 *
 *   SELECT Q.category, AVG(Q.final)
 *   FROM (SELECT MAX(B.price) AS final, A.category
 *         FROM auction A, bid B
 *         WHERE A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND A.expires
 *         GROUP BY A.id, A.category) Q
 *   GROUP BY Q.category
 *
 * Spark's streaming model runs this in two steps. The stream joins each auction with its bids
 * while it is open and takes the highest price once the auction has closed: the auction side's
 * event time is `expires` (its own watermark), so the aggregation by (id, category, expires)
 * runs in append mode and emits an auction once the watermark passes its end, and the join's
 * state is bounded by the watermarks. The average per category is an aggregation over that
 * aggregation without an event-time key, which a streaming query cannot run in append mode and
 * which no other mode allows after a stream-stream join: it runs as a batch (`finish`) over the
 * streaming query's output. Flink updates the averages continuously instead, and its AVG of a
 * BIGINT is a BIGINT; here it is Spark's double.
 */
import { F } from "../../mod.ts"
import { auction, bid, type Frame, type NexmarkQuery, WATERMARK_DELAY, withWatermark } from "./Nexmark.ts"

export const q4: NexmarkQuery = {
  name: "q4",
  title: "average price per category",
  outputMode: "append",
  build: (events: Frame) => {
    const auctions = auction(events).select(
      F.col("id").as("a_id"),
      F.col("category"),
      F.col("dateTime").as("a_time"),
      F.col("expires")
    )
    const timedAuctions = auctions.isStreaming ? auctions.withWatermark("expires", WATERMARK_DELAY) : auctions
    const bids = bid(withWatermark(events)).select(F.col("auction"), F.col("price"), F.col("dateTime").as("b_time"))
    return timedAuctions
      .join(
        bids,
        F.col("a_id")
          .eq(F.col("auction"))
          .and(F.col("b_time").geq(F.col("a_time")))
          .and(F.col("b_time").leq(F.col("expires"))),
        "inner"
      )
      .groupBy(F.col("a_id"), F.col("category"), F.col("expires"))
      .agg(F.max("price").as("final"))
      .select(F.col("a_id").as("id"), F.col("category"), F.col("expires"), F.col("final"))
  },
  isFinal: (row, watermarkMs) => (row.expires as Date).getTime() <= watermarkMs,
  finish: (finals: Frame) =>
    finals
      .groupBy(F.col("category"))
      .agg(F.avg("final").as("final"))
      .select(F.col("category").as("id"), F.col("final")),
  reference: (events: Frame) => {
    const a = auction(events)
    const b = bid(events).select(F.col("auction"), F.col("price"), F.col("dateTime").as("b_time"))
    return a
      .join(
        b,
        F.col("id")
          .eq(F.col("auction"))
          .and(F.col("b_time").geq(F.col("dateTime")))
          .and(F.col("b_time").leq(F.col("expires"))),
        "inner"
      )
      .groupBy(F.col("id"), F.col("category"))
      .agg(F.max("price").as("final"))
      .groupBy(F.col("category"))
      .agg(F.avg("final").as("final"))
      .select(F.col("category").as("id"), F.col("final"))
  },
  difference:
    "two steps: the stream gives each closed auction's (id, category, expires, final) in append mode (the auction's event time is its expiry); the average per category runs as a batch over that output. Flink updates the averages continuously, and averages BIGINTs as a BIGINT (here a double)."
}
