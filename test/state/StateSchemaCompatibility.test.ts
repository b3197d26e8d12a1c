/**
 * Spark's `StateSchemaCompatibilityCheckerSuite` cases, on `incompatibility`/`checkCompatibility`:
 * identical schemas pass; names are not compared; added or removed fields, changed types and
 * nullable-where-the-state-is-not fail, naming the field; nested structs, arrays and maps are
 * compared recursively. Plus the stored form round-trips.
 */
import { describe, expect, it } from "vitest"
import * as T from "../../core/DataType.ts"
import {
  checkCompatibility,
  decodeSchema,
  encodeSchema,
  incompatibility
} from "../../state/StateSchemaCompatibility.ts"

const key = T.struct([T.field("key1", T.IntegerType, false), T.field("key2", T.StringType, true)])
const value = T.struct([
  T.field("value1", T.LongType, false),
  T.field("value2", T.StringType, true),
  T.field(
    "nested",
    T.struct([T.field("a", T.DoubleType, true), T.field("b", T.array(T.IntegerType, true), true)]),
    true
  )
])

describe("StateSchemaCompatibility", () => {
  it("identical schemas are compatible", () => {
    expect(
      checkCompatibility(
        { keySchema: key, valueSchema: value },
        { keySchema: key, valueSchema: value },
        { operatorId: 0, storeName: "default" }
      )
    ).toBeUndefined()
  })

  it("field names are not compared (Spark: equalsIgnoreNameAndCompatibleNullability)", () => {
    const renamed = T.struct([T.field("k1", T.IntegerType, false), T.field("k2", T.StringType, true)])
    expect(incompatibility(key, renamed)).toBeUndefined()
  })

  it("nullability may only tighten", () => {
    const tighter = T.struct([T.field("key1", T.IntegerType, false), T.field("key2", T.StringType, false)])
    expect(incompatibility(key, tighter)).toBeUndefined()
    const looser = T.struct([T.field("key1", T.IntegerType, true), T.field("key2", T.StringType, true)])
    expect(incompatibility(key, looser)).toBe("field 'key1' became nullable; the stored state has it non-nullable")
  })

  it("changed types name the field, nested fields by their path", () => {
    const changed = T.struct([
      T.field("value1", T.LongType, false),
      T.field("value2", T.StringType, true),
      T.field("nested", T.struct([T.field("a", T.StringType, true), T.field("b", T.array(T.IntegerType), true)]), true)
    ])
    expect(incompatibility(value, changed)).toBe("field 'nested.a' changed type from double to string")
    const arrayElem = T.struct([
      T.field("value1", T.LongType, false),
      T.field("value2", T.StringType, true),
      T.field("nested", T.struct([T.field("a", T.DoubleType, true), T.field("b", T.array(T.LongType), true)]), true)
    ])
    expect(incompatibility(value, arrayElem)).toBe("field 'nested.b[]' changed type from int to bigint")
    expect(
      incompatibility(T.map(T.StringType, T.IntegerType, false), T.map(T.StringType, T.IntegerType, true), "m")
    ).toBe("field 'm' now allows null map values; the stored state's do not")
    expect(incompatibility(T.map(T.StringType, T.IntegerType), T.map(T.IntegerType, T.IntegerType), "m")).toBe(
      "field 'm{key}' changed type from string to int"
    )
  })

  it("added and removed fields are incompatible, nullable or not", () => {
    const added = T.struct([...key.fields, T.field("key3", T.StringType, true)])
    expect(incompatibility(key, added)).toBe("the schema has 3 fields where the stored state has 2: added 'key3'")
    const removed = T.struct([key.fields[0]])
    expect(incompatibility(key, removed)).toBe("the schema has 1 fields where the stored state has 2: removed 'key2'")
  })

  it("the error is Spark's error class and names the operator, the store and the field", () => {
    const err = checkCompatibility(
      { keySchema: key, valueSchema: T.struct([T.field("count", T.LongType)]) },
      { keySchema: key, valueSchema: T.struct([T.field("count", T.StringType)]) },
      { operatorId: 4, storeName: "left-keyToNumValues" }
    )
    expect(err?.reason).toBe("SchemaIncompatible")
    expect(err?.operatorId).toBe(4)
    expect(err?.message).toBe(
      "[STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE] Provided value schema does not match existing state value schema for " +
        "operator 4 store 'left-keyToNumValues': field 'count' changed type from bigint to string. " +
        "Existing value_schema=struct<count:bigint>, new value_schema=struct<count:string>. Please check number and type " +
        "of fields: a query whose state is incompatible must start from a new checkpoint. To run it anyway, set " +
        "spark.sql.streaming.stateStore.stateSchemaCheck to false (results may then be wrong)."
    )
    // The key schema is checked first.
    const both = checkCompatibility(
      { keySchema: key, valueSchema: value },
      { keySchema: T.struct([T.field("x", T.StringType)]), valueSchema: T.struct([]) },
      { operatorId: 0, storeName: "default" }
    )
    expect(both?.message).toMatch(/^\[STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE\]/)
  })

  it("the stored form round-trips and rejects anything else", () => {
    const schema = {
      keySchema: key,
      valueSchema: T.struct([...value.fields, T.field("m", T.map(T.StringType, T.TimestampType, false))])
    }
    const text = encodeSchema(schema)
    expect(decodeSchema(text)).toEqual(schema)
    expect(encodeSchema(decodeSchema(text)!)).toBe(text)
    expect(decodeSchema("{}")).toBeUndefined()
    expect(decodeSchema("not json")).toBeUndefined()
    expect(
      decodeSchema(JSON.stringify({ keySchema: { _tag: "struct", fields: [] }, valueSchema: { _tag: "bogus" } }))
    ).toBeUndefined()
  })
})
