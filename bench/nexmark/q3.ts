/**
 * Nexmark q3, local item suggestion (Flink's `q3.sql`): who sells in category 10 in Oregon, Idaho
 * or California — a stream-stream inner join of auctions with their sellers.
 *
 *   SELECT P.name, P.city, P.state, A.id
 *   FROM auction AS A INNER JOIN person AS P ON A.seller = P.id
 *   WHERE A.category = 10 AND (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA')
 *
 * As in Flink, the join has no time bound: both sides are kept in state for the whole run (Spark
 * runs an unbounded stream-stream inner join in append mode the same way).
 */
import { F } from "../../mod.ts"
import { auction, type Frame, type NexmarkQuery, person } from "./Nexmark.ts"

export const q3: NexmarkQuery = {
  name: "q3",
  title: "local item suggestion",
  outputMode: "append",
  build: (events: Frame) => {
    const a = auction(events).where(F.col("category").eq(10)).select(F.col("id").as("a_id"), F.col("seller"))
    const p = person(events)
      .where(F.col("state").isin("OR", "ID", "CA"))
      .select(F.col("id").as("p_id"), F.col("name"), F.col("city"), F.col("state"))
    return a
      .join(p, F.col("seller").eq(F.col("p_id")), "inner")
      .select(F.col("name"), F.col("city"), F.col("state"), F.col("a_id").as("id"))
  }
}
