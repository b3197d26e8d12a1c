/** Spark's SQL spellings of types (`DataType.sql`), the one place messages, DDL and Spark Connect take them from. */
import { describe, expect, it } from "vitest"
import * as T from "../../core/DataType.ts"
import { toSQLType } from "../../core/analysis/TypeCoercion.ts"
import { dataTypeSql } from "../../core/functions/Aggregates.ts"

describe("DataType.sqlTypeName", () => {
  it("spells every type as Spark 4's DataType.sql", () => {
    expect(
      [
        T.NullType,
        T.BooleanType,
        T.IntegerType,
        T.LongType,
        T.DoubleType,
        T.StringType,
        T.BinaryType,
        T.TimestampType,
        T.DateType
      ].map(T.sqlTypeName)
    ).toEqual(["VOID", "BOOLEAN", "INT", "BIGINT", "DOUBLE", "STRING", "BINARY", "TIMESTAMP", "DATE"])
    expect(T.sqlTypeName(T.map(T.StringType, T.array(T.IntegerType)))).toBe("MAP<STRING, ARRAY<INT>>")
    // Spark 4's StructField.sql: a field that is never null says NOT NULL; names are quoted when needed.
    expect(
      T.sqlTypeName(
        T.struct([T.field("a b", T.DoubleType), T.field("c", T.DateType, false), T.field("1x", T.LongType)])
      )
    ).toBe("STRUCT<`a b`: DOUBLE, c: DATE NOT NULL, 1x: BIGINT>")
  })

  it("quotes names as Spark's QuotingUtils.quoteIfNeeded", () => {
    expect(["abc_1", "1abc", "123", "my col", "we`ird", ""].map(T.quoteIfNeeded)).toEqual([
      "abc_1",
      "1abc",
      "`123`",
      "`my col`",
      "`we``ird`",
      "``"
    ])
  })

  it("is what the analyzer's messages and the aggregates' messages use", () => {
    const t = T.struct([T.field("k", T.map(T.IntegerType, T.IntegerType), false)])
    expect(toSQLType(t)).toBe('"STRUCT<k: MAP<INT, INT> NOT NULL>"')
    expect(dataTypeSql(t)).toBe(T.sqlTypeName(t))
  })
})
