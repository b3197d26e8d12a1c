/**
 * Nexmark q7, highest bid (Flink's `q7.sql`): the bids at the highest price of each 10-second
 * tumbling window.
 *
 *   SELECT B.auction, B.price, B.bidder, B.dateTime, B.extra
 *   FROM bid B JOIN (
 *     SELECT MAX(price) AS maxprice, window_end AS dateTime
 *     FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
 *     GROUP BY window_start, window_end) B1
 *   ON B.price = B1.maxprice
 *   WHERE B.dateTime BETWEEN B1.dateTime - INTERVAL '10' SECOND AND B1.dateTime
 *
 * In Spark the window maxima (a window aggregation in append mode, emitted once the watermark
 * closes a window) are joined back to the bid stream on the window and the price. Flink's time
 * range `[window_end - 10 s, window_end]` is the window plus the instant of its end, so a bid
 * is tagged with its own window and, when it falls exactly on a window boundary, also with the
 * window that ends there; with the window in the join key the watermark evicts both sides of
 * the join (a range condition on `window.end` would keep every bid in state: the window's end is
 * not an event-time column).
 */
import { F } from "../../mod.ts"
import { bid, type Frame, type NexmarkQuery, withWatermark } from "./Nexmark.ts"

const SIZE_MS = 10_000

export const q7: NexmarkQuery = {
  name: "q7",
  title: "highest bid",
  outputMode: "append",
  build: (events: Frame) => {
    const bids = bid(withWatermark(events))
    const maxima = bids.groupBy(F.window("dateTime", "10 seconds").as("max_window")).agg(F.max("price").as("maxprice"))
    const t = F.unix_millis(F.col("dateTime"))
    const start = t.minus(t.mod(SIZE_MS))
    const own = F.struct(F.timestamp_millis(start).as("start"), F.timestamp_millis(start.plus(SIZE_MS)).as("end"))
    const ending = F.when(
      t.mod(SIZE_MS).eq(0),
      F.struct(F.timestamp_millis(t.minus(SIZE_MS)).as("start"), F.col("dateTime").as("end"))
    )
    const tagged = bids
      .select(F.col("*"), F.explode(F.array(own, ending)).as("bid_window"))
      .where(F.col("bid_window").isNotNull())
    return tagged
      .join(
        maxima,
        F.col("bid_window")
          .eq(F.col("max_window"))
          .and(F.col("price").eq(F.col("maxprice"))),
        "inner"
      )
      .select(F.col("auction"), F.col("price"), F.col("bidder"), F.col("dateTime"), F.col("extra"))
  },
  // A bid is joined once the watermark closes its window (or the window ending at it).
  isFinal: (row, watermarkMs) =>
    Math.floor((row.dateTime as Date).getTime() / SIZE_MS) * SIZE_MS + SIZE_MS <= watermarkMs,
  // Flink's SQL: the maxima joined back on the price and the time range [window_end - 10 s, window_end].
  reference: (events: Frame) => {
    const bids = bid(events)
    const maxima = bids
      .groupBy(F.window("dateTime", "10 seconds"))
      .agg(F.max("price").as("maxprice"))
      .select(F.col("maxprice"), F.col("window.end").as("window_end"))
    const t = F.unix_millis(F.col("dateTime"))
    const end = F.unix_millis(F.col("window_end"))
    return bids
      .join(
        maxima,
        F.col("price")
          .eq(F.col("maxprice"))
          .and(t.geq(end.minus(SIZE_MS)))
          .and(t.leq(end)),
        "inner"
      )
      .select(F.col("auction"), F.col("price"), F.col("bidder"), F.col("dateTime"), F.col("extra"))
  },
  difference:
    "the maxima are joined back on the window (and the window ending at the bid, for a bid exactly on a boundary) instead of Flink's time range on window_end, so that the watermark bounds the join's state; the rows are the same."
}
