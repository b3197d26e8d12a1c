/**
 * Type tests for `df.write`: format names and save modes are literal unions (with a string
 * fallback for custom formats), partition columns are the row's column names, and every action
 * is an Effect failing with AnalysisError | ConnectorError.
 */
import type { Effect } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import type { AnalysisError, ConnectorError } from "../../../core/Errors.ts"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"
import type { DataFrameWriter, SaveMode, WriteFormat } from "../../../structured/api/DataFrameWriter.ts"
import type { Row } from "../../../structured/api/RowTypes.ts"

declare const people: DataFrame<{ name: string; age: number; city: string | null }>
declare const untyped: DataFrame<Row>

describe("DataFrameWriter", () => {
  it("is reached through df.write and keeps the row type", () => {
    expectTypeOf(people.write).toEqualTypeOf<DataFrameWriter<{ name: string; age: number; city: string | null }>>()
  })
  it("save and the shorthands are Effects with the writer's errors", () => {
    expectTypeOf(people.write.save("/out")).toEqualTypeOf<Effect.Effect<void, AnalysisError | ConnectorError>>()
    expectTypeOf(people.write.parquet("/out")).toEqualTypeOf<Effect.Effect<void, AnalysisError | ConnectorError>>()
    expectTypeOf(people.write.avro("/out")).toEqualTypeOf<Effect.Effect<void, AnalysisError | ConnectorError>>()
    expectTypeOf(people.write.orc("/out")).toEqualTypeOf<Effect.Effect<void, AnalysisError | ConnectorError>>()
  })
  it("modes are Spark's save modes", () => {
    expectTypeOf<SaveMode>().toEqualTypeOf<"error" | "errorifexists" | "append" | "overwrite" | "ignore">()
    people.write.mode("overwrite").mode("append").mode("ignore").mode("error").mode("errorifexists")
    // @ts-expect-error not a save mode
    people.write.mode("replace")
  })
  it("formats are the built-in names or any registered writer's", () => {
    expectTypeOf<"avro">().toMatchTypeOf<WriteFormat>()
    expectTypeOf<"delta">().toMatchTypeOf<WriteFormat>()
    people.write.format("parquet").format("my-custom-format")
  })
  it("partitionBy takes the row's column names; any name on an untyped row", () => {
    people.write.partitionBy("city", "age")
    // @ts-expect-error "cty" is not a column
    people.write.partitionBy("cty")
    untyped.write.partitionBy("anything")
  })
  it("options take strings, numbers and booleans", () => {
    people.write.option("compression", "snappy").option("maxRecordsPerFile", 10).option("header", true)
    people.write.options({ header: true, sep: ";" })
    // @ts-expect-error options are scalar values
    people.write.option("header", { yes: true })
  })
})
