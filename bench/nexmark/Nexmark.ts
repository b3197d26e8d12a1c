/**
 * What the Nexmark queries share: Flink's views over the Nexmark table (`nexmark-flink`'s
 * `ddl_views.sql`: `person`, `auction` and `bid` as the struct's fields plus the table's
 * `dateTime`), Flink's watermark (`dateTime - INTERVAL '4' SECOND`), the table's schema as DDL
 * (for reading the same events back from files), and the shape of a query module.
 *
 * The same DataFrame program runs over any DataFrame with the Nexmark table's columns: the
 * `nexmark` source streaming or batch, or JSON / Parquet files of its events read with
 * `readStream` (on tributary or, through Spark Connect, on Spark).
 */
import { type Column, type DataFrame, F, type OutputMode, type Row } from "../../mod.ts"

/** Any DataFrame: the queries work on rows by column name, so their row types stay open. */
// biome-ignore lint/suspicious/noExplicitAny: DataFrame<R> is invariant in R; the queries are untyped programs over named columns
export type Frame = DataFrame<any>

/** Flink's Nexmark DDL: `WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND`. */
export const WATERMARK_DELAY = "4 seconds"

/** The Nexmark table (`NexmarkSchema`) as a DDL string, for `readStream.schema(…)` over files. */
export const NEXMARK_DDL =
  "event_type INT, " +
  "person STRUCT<id: BIGINT, name: STRING, emailAddress: STRING, creditCard: STRING, city: STRING, state: STRING, dateTime: TIMESTAMP, extra: STRING>, " +
  "auction STRUCT<id: BIGINT, itemName: STRING, description: STRING, initialBid: BIGINT, reserve: BIGINT, dateTime: TIMESTAMP, expires: TIMESTAMP, seller: BIGINT, category: BIGINT, extra: STRING>, " +
  "bid STRUCT<auction: BIGINT, bidder: BIGINT, price: BIGINT, channel: STRING, url: STRING, dateTime: TIMESTAMP, extra: STRING>, " +
  "dateTime TIMESTAMP"

/** Flink's `person` view: `SELECT person.id, …, dateTime, person.extra FROM nexmark WHERE event_type = 0`. */
export const person = (events: Frame): Frame =>
  events
    .where(F.col("event_type").eq(0))
    .select(
      F.col("person.id").as("id"),
      F.col("person.name").as("name"),
      F.col("person.emailAddress").as("emailAddress"),
      F.col("person.creditCard").as("creditCard"),
      F.col("person.city").as("city"),
      F.col("person.state").as("state"),
      F.col("dateTime"),
      F.col("person.extra").as("extra")
    )

/** Flink's `auction` view. */
export const auction = (events: Frame): Frame =>
  events
    .where(F.col("event_type").eq(1))
    .select(
      F.col("auction.id").as("id"),
      F.col("auction.itemName").as("itemName"),
      F.col("auction.description").as("description"),
      F.col("auction.initialBid").as("initialBid"),
      F.col("auction.reserve").as("reserve"),
      F.col("dateTime"),
      F.col("auction.expires").as("expires"),
      F.col("auction.seller").as("seller"),
      F.col("auction.category").as("category"),
      F.col("auction.extra").as("extra")
    )

/** Flink's `bid` view. */
export const bid = (events: Frame): Frame =>
  events
    .where(F.col("event_type").eq(2))
    .select(
      F.col("bid.auction").as("auction"),
      F.col("bid.bidder").as("bidder"),
      F.col("bid.price").as("price"),
      F.col("bid.channel").as("channel"),
      F.col("bid.url").as("url"),
      F.col("dateTime"),
      F.col("bid.extra").as("extra")
    )

/** The events with Flink's watermark on `dateTime` (a no-op for a batch DataFrame). */
export const withWatermark = (events: Frame): Frame =>
  events.isStreaming ? events.withWatermark("dateTime", WATERMARK_DELAY) : events

/** What a query may take besides the events. */
export interface QueryOptions {
  /**
   * q12's processing time (default `current_timestamp()`, the micro-batch's timestamp). A test
   * gives a column computed from the events, to run the same program as a batch.
   */
  readonly processingTime?: Column<Date, string>
}

/** One Nexmark query as a tributary DataFrame program. */
export interface NexmarkQuery {
  readonly name: string
  /** Flink's description of the query. */
  readonly title: string
  /** The output mode the streaming query runs in. */
  readonly outputMode: OutputMode
  /**
   * The program over the Nexmark table: streaming (from the source or files) or batch (the
   * batch engine over the same events), with the same answer.
   */
  readonly build: (events: Frame, options?: QueryOptions) => Frame
  /**
   * Where Spark's streaming model cannot give Flink's answer as one query (an aggregation over
   * an aggregation without an event-time key), the last step, run as a batch over the
   * streaming query's output. `undefined` when the streaming output is the answer.
   */
  readonly finish?: (output: Frame) => Frame
  /**
   * For a query that emits results only once the watermark closes them (append mode over event
   * time), whether a row of the complete (batch) answer has been emitted by a stream whose
   * watermark reached `watermarkMs`. `undefined` when every row is emitted as its events arrive.
   */
  readonly isFinal?: (row: Row, watermarkMs: number) => boolean
  /**
   * Flink's SQL as written, as a batch DataFrame program, when `build` (with `finish`) is a
   * reformulation of it: the tests' oracle. `undefined` when `build` is Flink's SQL itself.
   */
  readonly reference?: (events: Frame) => Frame
  /** How this program differs from Flink's SQL, if it does. */
  readonly difference?: string
}
