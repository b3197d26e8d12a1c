/**
 * Ports of Spark's KafkaSourceOffsetSuite: the offset JSON round trip, equality of offsets by
 * their JSON (Spark's OffsetSuite `compare`), the offset log and `compareTo`. No broker needed.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  compareOffsets,
  decodeKafkaSourceOffset,
  fromJson,
  type KafkaSourceOffset,
  toJson
} from "../../../connectors/kafka/KafkaSourceOffset.ts"

/** Spark's `KafkaSourceOffset((topic, partition, offset)*)`. */
const kso = (...tps: ReadonlyArray<readonly [string, number, number]>): KafkaSourceOffset =>
  toJson(new Map(tps.map(([t, p, o]) => [`${t}-${p}`, o])))

const text = (o: unknown) => JSON.stringify(o)

describe("KafkaSourceOffsetSuite (Spark)", () => {
  // Spark's OffsetSuite `compare(one, two)`: each equals itself and differs from the other.
  const pairs: ReadonlyArray<readonly [KafkaSourceOffset, KafkaSourceOffset]> = [
    [kso(["t", 0, 1]), kso(["t", 0, 2])],
    [kso(["t", 0, 1], ["t", 1, 0]), kso(["t", 0, 2], ["t", 1, 1])],
    [kso(["t", 0, 1], ["T", 0, 0]), kso(["t", 0, 2], ["T", 0, 1])],
    [kso(["t", 0, 1]), kso(["t", 0, 2], ["t", 1, 1])]
  ]
  for (const [one, two] of pairs) {
    it(`comparison ${text(one)} <=> ${text(two)}`, () => {
      expect(text(one)).toBe(text(kso(...[...fromJson(one)].map(([k, o]) => split(k, o)))))
      expect(text(one)).not.toBe(text(two))
      expect(text(two)).not.toBe(text(one))
    })
  }

  const kso1 = kso(["t", 0, 1])
  const kso2 = kso(["t", 0, 2], ["t", 1, 3])
  // Spark's kso3 names t-1 twice; the later offset wins, as in a Scala Map.
  const kso3 = kso(["t", 0, 2], ["t", 1, 3], ["t", 1, 4])

  it.effect("comparison of serialized offsets", () =>
    Effect.gen(function* () {
      const one = yield* decodeKafkaSourceOffset(JSON.parse(text(kso1)))
      const two = yield* decodeKafkaSourceOffset(JSON.parse(text(kso2)))
      expect(text(one)).not.toBe(text(two))
    })
  )

  it.effect("basic serialization - deserialization", () =>
    Effect.gen(function* () {
      const back = yield* decodeKafkaSourceOffset(JSON.parse(text(kso1)))
      expect(fromJson(back)).toEqual(fromJson(kso1))
      expect(text(kso3)).toBe(`{"t":{"0":2,"1":4}}`)
    })
  )

  it.effect("read Spark 2.1.0 offset format", () =>
    Effect.gen(function* () {
      // The offset of Spark's resource kafka-source-offset-version-2.1.0.txt.
      const offset = yield* decodeKafkaSourceOffset(
        JSON.parse(`{"topic1":{"0":456,"1":789},"topic2":{"0":0}}`)
      )
      expect(text(toJson(fromJson(offset)))).toBe(
        text(kso(["topic1", 0, 456], ["topic1", 1, 789], ["topic2", 0, 0]))
      )
    })
  )

  it("comparison of offsets", () => {
    // offsets for all topic partitions are equal
    expect(compareOffsets(kso(["t", 0, 1]), kso(["t", 0, 1]))).toBe("EQUAL")
    // offsets for all topic partitions are less in left side
    expect(
      compareOffsets(kso(["t", 0, 1], ["t", 1, 1], ["t2", 0, 1]), kso(["t", 0, 2], ["t", 1, 2], ["t2", 0, 2]))
    ).toBe("LESS")
    // some less, the rest equal
    expect(
      compareOffsets(kso(["t", 0, 1], ["t", 1, 1], ["t2", 0, 1]), kso(["t", 0, 2], ["t", 1, 1], ["t2", 0, 1]))
    ).toBe("LESS")
    // all greater or equal in left side
    expect(
      compareOffsets(kso(["t", 0, 2], ["t", 1, 2], ["t2", 0, 2]), kso(["t", 0, 1], ["t", 1, 2], ["t2", 0, 2]))
    ).toBe("GREATER")
    expect(
      compareOffsets(kso(["t", 0, 2], ["t", 1, 2], ["t2", 0, 2]), kso(["t", 0, 1], ["t", 1, 1], ["t2", 0, 1]))
    ).toBe("GREATER")
    // some greater, some less
    expect(
      compareOffsets(kso(["t", 0, 2], ["t", 1, 1], ["t2", 1, 1]), kso(["t", 0, 1], ["t", 1, 2], ["t2", 1, 1]))
    ).toBe("UNDETERMINED")
    // types of offsets are different (Spark's LongOffset(1))
    expect(compareOffsets(kso(["t", 0, 2], ["t", 1, 1]), 1)).toBe("NOT_COMPARABLE")
  })

  it("comparison of offsets - only compare topic partitions co-exist in both offsets", () => {
    // (t2, 0) and (t, 1) will be ignored. (t, 0) will be only one topic partition to be compared.
    expect(compareOffsets(kso(["t", 0, 1], ["t2", 0, 10]), kso(["t", 0, 1], ["t", 1, 5]))).toBe("EQUAL")
  })
})

const split = (key: string, offset: number): readonly [string, number, number] => {
  const i = key.lastIndexOf("-")
  return [key.slice(0, i), Number(key.slice(i + 1)), offset]
}
