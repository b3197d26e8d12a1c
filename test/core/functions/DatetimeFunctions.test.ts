// Expected values are the `examples` of Spark's ExpressionDescription annotations
// (sql/catalyst/.../expressions/datetimeExpressions.scala), in a UTC session, unless noted.
import { describe, expect, it } from "vitest"
import * as T from "../../../core/DataType.ts"
import { formatDate, formatTimestamp } from "../../../core/functions/DateTimeUtils.ts"
import { call, ctx, date, dbl, evaluate, fn, lit, long, resolveError, str, ts, typeOf } from "./support.ts"

const asDate = (v: unknown): string | null => (v === null ? null : formatDate(v as number))
const asTs = (v: unknown): string | null => (v === null ? null : formatTimestamp(v as number))

describe("fields", () => {
  it("of dates (strings and timestamps are cast to date)", () => {
    expect(fn("year", lit("2016-07-30"))).toBe(2016)
    expect(fn("month", lit("2016-07-30"))).toBe(7)
    expect(fn("dayofmonth", lit("2009-07-30"))).toBe(30)
    expect(fn("day", date("2009-07-30"))).toBe(30)
    expect(fn("quarter", lit("2016-08-31"))).toBe(3)
    expect(fn("dayofweek", lit("2009-07-30"))).toBe(5)
    expect(fn("weekday", lit("2009-07-30"))).toBe(3)
    expect(fn("dayofyear", lit("2016-04-09"))).toBe(100)
    expect(fn("weekofyear", lit("2008-02-20"))).toBe(8)
    expect(fn("weekofyear", lit("2021-01-01"))).toBe(53)
    expect(fn("year", ts("2016-07-30 23:59:59"))).toBe(2016)
    expect(fn("dayname", date("2008-02-20"))).toBe("Wed")
    expect(fn("monthname", lit("2008-02-20"))).toBe("Feb")
    expect(fn("year", lit("not a date"))).toBe(null)
    expect(typeOf("year", lit("2016-07-30"))).toBe("int")
  })

  it("of timestamps", () => {
    expect(fn("hour", lit("2009-07-30 12:58:59"))).toBe(12)
    expect(fn("minute", lit("2009-07-30 12:58:59"))).toBe(58)
    expect(fn("second", lit("2009-07-30 12:58:59"))).toBe(59)
    expect(fn("hour", ts("1969-12-31 23:00:00"))).toBe(23)
    expect(fn("hour", date("2009-07-30"))).toBe(0)
  })
})

describe("date arithmetic", () => {
  it("date_add, date_sub, datediff", () => {
    expect(asDate(fn("date_add", lit("2016-07-30"), lit(1)))).toBe("2016-07-31")
    expect(asDate(fn("date_sub", lit("2016-07-30"), lit(1)))).toBe("2016-07-29")
    expect(asDate(fn("date_add", ts("2016-07-30 23:00:00"), long(1)))).toBe("2016-07-31")
    expect(fn("datediff", lit("2009-07-31"), lit("2009-07-30"))).toBe(1)
    expect(fn("datediff", lit("2009-07-30"), lit("2009-07-31"))).toBe(-1)
    expect(typeOf("date_add", lit("2016-07-30"), lit(1))).toBe("date")
  })

  it("add_months clamps to the month's end", () => {
    expect(asDate(fn("add_months", lit("2016-08-31"), lit(1)))).toBe("2016-09-30")
    expect(asDate(fn("add_months", lit("2016-01-31"), lit(1)))).toBe("2016-02-29")
    expect(asDate(fn("add_months", lit("2016-03-31"), lit(-13)))).toBe("2015-02-28")
  })

  it("months_between", () => {
    expect(fn("months_between", lit("1997-02-28 10:30:00"), lit("1996-10-30"))).toBe(3.94959677)
    expect(fn("months_between", lit("1997-02-28 10:30:00"), lit("1996-10-30"), lit(false))).toBe(3.9495967741935485)
    expect(fn("months_between", lit("2017-06-30"), lit("2017-02-28"))).toBe(4)
    expect(fn("months_between", lit("2017-06-15"), lit("2017-02-15 12:00:00"))).toBe(4)
  })

  it("last_day, next_day, trunc, date_trunc", () => {
    expect(asDate(fn("last_day", lit("2009-01-12")))).toBe("2009-01-31")
    expect(asDate(fn("last_day", lit("2024-02-01")))).toBe("2024-02-29")
    expect(asDate(fn("next_day", lit("2015-01-14"), lit("TU")))).toBe("2015-01-20")
    expect(asDate(fn("next_day", lit("2015-01-14"), lit("wednesday")))).toBe("2015-01-21")
    expect(fn("next_day", lit("2015-01-14"), lit("xx"))).toBe(null)
    expect(asDate(fn("trunc", lit("2019-08-04"), lit("week")))).toBe("2019-07-29")
    expect(asDate(fn("trunc", lit("2019-08-04"), lit("quarter")))).toBe("2019-07-01")
    expect(asDate(fn("trunc", lit("2009-02-12"), lit("MM")))).toBe("2009-02-01")
    expect(asDate(fn("trunc", lit("2015-10-27"), lit("YEAR")))).toBe("2015-01-01")
    expect(fn("trunc", lit("2015-10-27"), lit("DAY"))).toBe(null)
    expect(asTs(fn("date_trunc", lit("YEAR"), lit("2015-03-05T09:32:05.359")))).toBe("2015-01-01 00:00:00")
    expect(asTs(fn("date_trunc", lit("MM"), lit("2015-03-05T09:32:05.359")))).toBe("2015-03-01 00:00:00")
    expect(asTs(fn("date_trunc", lit("DD"), lit("2015-03-05T09:32:05.359")))).toBe("2015-03-05 00:00:00")
    expect(asTs(fn("date_trunc", lit("HOUR"), lit("2015-03-05T09:32:05.359")))).toBe("2015-03-05 09:00:00")
    expect(asTs(fn("date_trunc", lit("MILLISECOND"), lit("2015-03-05T09:32:05.123456")))).toBe(
      "2015-03-05 09:32:05.123"
    )
    expect(asTs(fn("date_trunc", lit("WEEK"), lit("2015-03-05T09:32:05")))).toBe("2015-03-02 00:00:00")
    expect(asTs(fn("date_trunc", lit("QUARTER"), lit("2015-05-05T09:32:05")))).toBe("2015-04-01 00:00:00")
    expect(fn("date_trunc", lit("decade"), lit("2015-03-05"))).toBe(null)
  })

  it("make_date is null for an invalid date (non-ANSI)", () => {
    expect(asDate(fn("make_date", lit(2013), lit(7), lit(15)))).toBe("2013-07-15")
    expect(fn("make_date", lit(2019), lit(7), { _tag: "Literal", value: null, dataType: T.IntegerType })).toBe(null)
    expect(fn("make_date", lit(2019), lit(13), lit(1))).toBe(null)
    expect(fn("make_date", lit(2019), lit(2), lit(29))).toBe(null)
  })
})

describe("parsing and formatting", () => {
  it("to_date and to_timestamp", () => {
    expect(asDate(fn("to_date", lit("2009-07-30 04:17:52")))).toBe("2009-07-30")
    expect(asDate(fn("to_date", lit("2016-12-31"), lit("yyyy-MM-dd")))).toBe("2016-12-31")
    expect(asDate(fn("to_date", lit("31/12/2016"), lit("dd/MM/yyyy")))).toBe("2016-12-31")
    expect(fn("to_date", lit("2016-12-31"), lit("dd/MM/yyyy"))).toBe(null)
    expect(asDate(fn("to_date", ts("2016-12-31 23:59:59")))).toBe("2016-12-31")
    expect(asTs(fn("to_timestamp", lit("2016-12-31 00:12:00")))).toBe("2016-12-31 00:12:00")
    expect(asTs(fn("to_timestamp", lit("2016-12-31"), lit("yyyy-MM-dd")))).toBe("2016-12-31 00:00:00")
    expect(asTs(fn("to_timestamp", lit("12/31/2016 11:05:06 PM"), lit("MM/dd/yyyy hh:mm:ss a")))).toBe(
      "2016-12-31 23:05:06"
    )
    expect(asTs(fn("to_timestamp", lit("2016-12-31 10:00:00.5"), lit("yyyy-MM-dd HH:mm:ss.SSS")))).toBe(
      "2016-12-31 10:00:00.5"
    )
    expect(asTs(fn("to_timestamp", lit("20161231 1000"), lit("yyyyMMdd HHmm")))).toBe("2016-12-31 10:00:00")
    expect(asTs(fn("to_timestamp", lit("2016-12-31T10:00:00+0100"), lit("yyyy-MM-dd'T'HH:mm:ssZ")))).toBe(
      "2016-12-31 09:00:00"
    )
    expect(asTs(fn("to_timestamp", lit("31 Dec 2016"), lit("dd MMM yyyy")))).toBe("2016-12-31 00:00:00")
    expect(fn("to_timestamp", lit("2016-12-31 10:00"), lit("yyyy-MM-dd"))).toBe(null)
    expect(fn("to_timestamp", lit("2016-02-30"), lit("yyyy-MM-dd"))).toBe(null)
    expect(typeOf("to_timestamp", lit("x"))).toBe("timestamp")
  })

  it("invalid literal patterns are analysis errors; week-based letters are rejected as in Spark 3+", () => {
    expect(resolveError("to_date", lit("2016"), lit("YYYY-ww"))).toMatch(/INVALID_DATETIME_PATTERN/)
    expect(resolveError("date_format", lit("2016-01-01"), lit("yyyy-'MM"))).toMatch(/INVALID_DATETIME_PATTERN/)
  })

  it("unix_timestamp and from_unixtime", () => {
    expect(fn("unix_timestamp", lit("2016-04-08"), lit("yyyy-MM-dd"))).toBe(1460073600)
    expect(fn("unix_timestamp", lit("2016-04-08 10:00:00"))).toBe(1460109600)
    expect(fn("unix_timestamp", lit("2016-04-08"))).toBe(null)
    expect(fn("unix_timestamp", ts("1970-01-01 00:00:01.9"))).toBe(1)
    // issue #21 deviation 4: Spark's ToTimestamp divides toward zero before 1970
    expect(Object.is(fn("unix_timestamp", ts("1969-12-31 23:59:59.999")), 0)).toBe(true)
    expect(fn("unix_timestamp", ts("1969-12-31 23:59:58.5"))).toBe(-1)
    expect(fn("unix_timestamp", lit("1969-12-31 23:59:59"))).toBe(-1)
    expect(fn("unix_timestamp", date("1970-01-02"))).toBe(86400)
    expect(fn("from_unixtime", lit(0), lit("yyyy-MM-dd HH:mm:ss"))).toBe("1970-01-01 00:00:00")
    expect(fn("from_unixtime", lit(0))).toBe("1970-01-01 00:00:00")
    expect(typeOf("unix_timestamp", lit("2016-04-08"))).toBe("bigint")
    // F.unix_timestamp() is unix_timestamp(current_timestamp(), fmt): the query's timestamp
    expect(evaluate(call("unix_timestamp", { _tag: "CurrentTimestamp" }, lit("yyyy-MM-dd HH:mm:ss")))).toBe(
      Math.floor(ctx.currentTimestampMs / 1000)
    )
  })

  it("date_format with Spark patterns", () => {
    expect(fn("date_format", lit("2016-04-08"), lit("y"))).toBe("2016")
    const t = ts("2016-04-08 13:05:09.120")
    expect(fn("date_format", t, lit("yyyy-MM-dd'T'HH:mm:ss.SSS"))).toBe("2016-04-08T13:05:09.120")
    expect(fn("date_format", t, lit("dd/MM/yy hh:mm a"))).toBe("08/04/16 01:05 PM")
    expect(fn("date_format", t, lit("EEE, d MMM yyyy"))).toBe("Fri, 8 Apr 2016")
    expect(fn("date_format", t, lit("EEEE MMMM D"))).toBe("Friday April 99")
    expect(fn("date_format", t, lit("QQQ yyyy 'o''clock' XXX"))).toBe("Q2 2016 o'clock Z")
    expect(fn("date_format", ts(null), lit("y"))).toBe(null)
  })
})

describe("conversions", () => {
  it("timestamp_seconds, _millis, _micros and back", () => {
    expect(asTs(fn("timestamp_seconds", lit(1230219000)))).toBe("2008-12-25 15:30:00")
    expect(asTs(fn("timestamp_seconds", dbl(1230219000.123)))).toBe("2008-12-25 15:30:00.123")
    expect(fn("timestamp_seconds", dbl(Number.NaN))).toBe(null)
    expect(asTs(fn("timestamp_millis", long(1230219000123)))).toBe("2008-12-25 15:30:00.123")
    expect(asTs(fn("timestamp_micros", long(1230219000123123)))).toBe("2008-12-25 15:30:00.123")
    expect(fn("unix_seconds", lit("1970-01-01 00:00:01Z"))).toBe(1)
    expect(fn("unix_millis", lit("1970-01-01 00:00:01Z"))).toBe(1000)
    expect(fn("unix_micros", lit("1970-01-01 00:00:01Z"))).toBe(1000000)
    expect(fn("unix_date", lit("1970-01-02"))).toBe(1)
    expect(asDate(fn("date_from_unix_date", lit(1)))).toBe("1970-01-02")
  })

  it("from_utc_timestamp and to_utc_timestamp", () => {
    expect(asTs(fn("from_utc_timestamp", lit("2016-08-31"), lit("Asia/Seoul")))).toBe("2016-08-31 09:00:00")
    expect(asTs(fn("to_utc_timestamp", lit("2016-08-31"), lit("Asia/Seoul")))).toBe("2016-08-30 15:00:00")
    expect(asTs(fn("from_utc_timestamp", lit("2016-08-31"), lit("+02:00")))).toBe("2016-08-31 02:00:00")
    expect(fn("from_utc_timestamp", lit("2016-08-31"), lit("Not/AZone"))).toBe(null)
  })

  it("window_time is the window's end minus one millisecond", () => {
    const window = { _tag: "Literal", value: [0, 10_000], dataType: T.WindowType } as const
    expect(fn("window_time", window)).toBe(9_999)
    expect(typeOf("window_time", window)).toBe("timestamp")
    expect(resolveError("window_time", str("x"))).toMatch(/window column/)
  })
})
