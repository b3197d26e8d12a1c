/**
 * The names `format(...)` suggests (`ReadFormat`, `StreamReadFormat`, `StreamWriteFormat`,
 * `WriteFormat`) are the names the built-in connectors register, so the suggestions follow the
 * registries: a connector registered under a new name without its name in the type (or a name
 * left in the type after its connector is gone) fails here. The lists below are checked against
 * the types by tsc (each list holds exactly the type's literal members) and against the
 * registries at run time.
 */
import { describe, expect, expectTypeOf, it } from "vitest"
import { batchFormatNames, batchWriteFormatNames } from "../../../core/Formats.ts"
import { sinkFormatNames, sourceFormatNames } from "../../../core/Streaming.ts"
import "../../../mod.ts"
import type { ReadFormat } from "../../../structured/api/DataFrameReader.ts"
import type { WriteFormat } from "../../../structured/api/DataFrameWriter.ts"
import type { StreamReadFormat } from "../../../structured/api/DataStreamReader.ts"
import type { StreamWriteFormat } from "../../../structured/api/DataStreamWriter.ts"

/** The literal members of a union with a `(string & {})` fallback. */
type Known<T> = T extends string ? (string extends T ? never : T) : never

const streamRead = [
  "rate",
  "rate-micro-batch",
  "socket",
  "kafka",
  "kinesis",
  "nexmark",
  "parquet",
  "json",
  "csv",
  "text",
  "orc",
  "avro"
] as const
const streamWrite = ["console", "memory", "noop", "kafka", "parquet", "json", "csv", "text", "orc", "avro"] as const
const batchRead = ["parquet", "json", "csv", "text", "orc", "avro", "kafka", "nexmark"] as const
/** Read by DataFrameReader itself, not through the batch format registry. */
const stateSources = ["statestore", "state-metadata"] as const
const batchWrite = ["parquet", "json", "csv", "text", "avro", "orc"] as const

/** Spark's legacy provider class names, registered as aliases of `rate` and `socket`; not suggested. */
const legacyAliases = [
  "org.apache.spark.sql.execution.streaming.ratesourceprovider",
  "org.apache.spark.sql.execution.streaming.textsocketsourceprovider"
]

const sorted = (names: ReadonlyArray<string>): Array<string> => [...names].sort()

describe("the formats format(...) suggests", () => {
  it("are the types' literal members", () => {
    expectTypeOf<(typeof streamRead)[number]>().toEqualTypeOf<Known<StreamReadFormat>>()
    expectTypeOf<(typeof streamWrite)[number]>().toEqualTypeOf<Known<StreamWriteFormat>>()
    expectTypeOf<(typeof batchRead)[number] | (typeof stateSources)[number]>().toEqualTypeOf<Known<ReadFormat>>()
    expectTypeOf<(typeof batchWrite)[number]>().toEqualTypeOf<Known<WriteFormat>>()
  })

  it("are what the built-in connectors register", () => {
    expect(sourceFormatNames().filter((n) => !legacyAliases.includes(n))).toEqual(sorted(streamRead))
    expect(sourceFormatNames().filter((n) => legacyAliases.includes(n))).toEqual(legacyAliases)
    expect(sinkFormatNames()).toEqual(sorted(streamWrite))
    expect(batchFormatNames()).toEqual(sorted(batchRead))
    expect(batchWriteFormatNames()).toEqual(sorted(batchWrite))
  })
})
