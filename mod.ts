/**
 * tributary: Apache Spark's Structured Streaming and DataFrame API as a typed TypeScript
 * library on Effect, for Node.js and Deno.
 *
 * This is the composition root: it wires the built-in connectors into the format registry, so
 * `spark.read.format("json")` and friends work as soon as `tributary` is imported.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { F, Session } from "tributary-streaming"
 *
 * const program = Effect.gen(function* () {
 *   const spark = yield* Session
 *   const sales = spark.createDataFrame(
 *     [{ shop: "a", amount: 3 }, { shop: "b", amount: 5 }, { shop: "a", amount: 4 }],
 *     Schema.Struct({ shop: Schema.String, amount: Schema.Int })
 *   )
 *   yield* sales.groupBy("shop").agg(F.sum("amount").as("total")).orderBy("shop").show()
 * })
 * await Effect.runPromise(program.pipe(Effect.provide(Session.layer())))
 * ```
 * @since 0.1.0
 */
import { registerConsoleSink } from "./connectors/console/mod.ts"
import { AvroFunctionsCodec } from "./connectors/files/avro/AvroFunctionsCodec.ts"
import { JsonFunctionsParser } from "./connectors/files/JsonFunctionsParser.ts"
import { registerFileFormats } from "./connectors/files/mod.ts"
import { registerKafka } from "./connectors/kafka/mod.ts"
import { registerKinesis } from "./connectors/kinesis/mod.ts"
import { registerMemorySink } from "./connectors/memory/mod.ts"
import { registerNexmark } from "./connectors/nexmark/mod.ts"
import { registerNoopSink } from "./connectors/noop/mod.ts"
import { registerRate } from "./connectors/rate/mod.ts"
import { registerSocket } from "./connectors/socket/mod.ts"
import { registerSparkConnect } from "./connect/mod.ts"
import { registerAvroCodec } from "./core/functions/AvroFunctions.ts"
import { registerJsonParser } from "./core/functions/JsonFunctions.ts"

// One line per connector: each registers its formats under Spark's names.
registerFileFormats()
registerRate()
registerNexmark()
registerSocket()
registerConsoleSink()
registerMemorySink()
registerNoopSink()
registerKafka()
registerKinesis()
// The Avro library behind F.from_avro / F.to_avro (core holds none).
registerAvroCodec(AvroFunctionsCodec)
// The JSON parser behind F.from_json (the json format's).
registerJsonParser(JsonFunctionsParser)
// The Spark Connect backend of `Session.layer({ remote: "sc://…" })`.
registerSparkConnect()

export * from "./core/mod.ts"
export * from "./structured/mod.ts"
export { type ConnectAddress, parseAddress, SparkConnectTransport } from "./connect/mod.ts"
