/**
 * Nexmark q5, hot items (Flink's `q5.sql`): in each 10-second window sliding every 2 seconds, the
 * auctions with the most bids.
 *
 *   SELECT AuctionBids.auction, AuctionBids.num FROM (
 *     SELECT auction, count(*) AS num, window_start AS starttime, window_end AS endtime
 *     FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
 *     GROUP BY auction, window_start, window_end) AS AuctionBids
 *   JOIN (
 *     SELECT max(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime FROM (…the same counts…) AS CountBids
 *     GROUP BY CountBids.starttime, CountBids.endtime) AS MaxBids
 *   ON AuctionBids.starttime = MaxBids.starttime AND AuctionBids.endtime = MaxBids.endtime
 *      AND AuctionBids.num >= MaxBids.maxn
 *
 * Spark cannot join an aggregation with an aggregation of itself in one streaming query, so the
 * per-window maximum is taken in a second, chained window aggregation (append mode: the window
 * of the first one is its event time) that collects each window's (auction, count) pairs with
 * their maximum; exploding the pairs and keeping those at the maximum gives Flink's rows, ties
 * included.
 */
import { F } from "../../mod.ts"
import { bid, type Frame, type NexmarkQuery, withWatermark } from "./Nexmark.ts"

export const q5: NexmarkQuery = {
  name: "q5",
  title: "hot items",
  outputMode: "append",
  build: (events: Frame) => {
    const counts = bid(withWatermark(events))
      .groupBy(F.col("auction"), F.window("dateTime", "10 seconds", "2 seconds"))
      .agg(F.count("*").as("num"))
    return counts
      .groupBy(F.col("window"))
      .agg(F.max("num").as("maxn"), F.collect_list(F.struct(F.col("auction"), F.col("num"))).as("bids"))
      .select(F.col("window"), F.col("maxn"), F.explode("bids").as("b"))
      .where(F.col("b.num").geq(F.col("maxn")))
      .select(
        F.col("b.auction").as("auction"),
        F.col("b.num").as("num"),
        F.col("window.start").as("starttime"),
        F.col("window.end").as("endtime")
      )
  },
  isFinal: (row, watermarkMs) => (row.endtime as Date).getTime() <= watermarkMs,
  // Flink's SQL: the counts joined with their per-window maximum.
  reference: (events: Frame) => {
    const counts = bid(events)
      .groupBy(F.col("auction"), F.window("dateTime", "10 seconds", "2 seconds"))
      .agg(F.count("*").as("num"))
    const maxima = counts.groupBy(F.col("window").as("m_window")).agg(F.max("num").as("maxn"))
    return counts
      .join(
        maxima,
        F.col("window")
          .eq(F.col("m_window"))
          .and(F.col("num").geq(F.col("maxn"))),
        "inner"
      )
      .select(F.col("auction"), F.col("num"), F.col("window.start").as("starttime"), F.col("window.end").as("endtime"))
  },
  difference:
    "the per-window maximum comes from a chained window aggregation (collect_list of the window's counts with max, then explode) instead of Flink's join of the counts with their maximum; the rows are the same, with the window's starttime and endtime kept beside Flink's auction and num."
}
