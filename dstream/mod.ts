/**
 * `tributary/dstream`: Spark's legacy DStream API — `StreamingContext`, `DStream`, `RDD`,
 * `Receiver`, `StateSpec`, `State` and `StreamingListener` — on the session's scheduler and
 * state store, with the receiver write-ahead log, backpressure (`PIDRateEstimator`) and direct
 * streams over registered sources (`StreamingContext.directStream`, `KafkaUtils`). See `StreamingContext.ts` for the lifecycle and checkpointing, `DStream.ts` for
 * the operators.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Session } from "tributary-streaming"
 * import { StreamingContext } from "tributary-streaming/dstream"
 *
 * const program = Effect.gen(function* () {
 *   const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
 *   const lines = ssc.queueStream([["a b", "a"], ["b"]])
 *   lines.flatMap((l) => l.split(" ")).map((w) => [w, 1] as const).reduceByKey((a, b) => a + b).print()
 *   yield* ssc.start()
 *   yield* ssc.awaitTerminationOrTimeout(5_000)
 *   yield* ssc.stop()
 * })
 * await Effect.runPromise(program.pipe(Effect.provide(Session.layer())))
 * ```
 * @since 0.1.0
 */
export {
  StreamingContext,
  type StreamingContextError,
  type StreamingContextOptions,
  type StreamingContextState
} from "./StreamingContext.ts"
export { DStream, type DurationInput, MapWithStateDStream, type OutputReturn, type Widen } from "./DStream.ts"
export { RDD } from "./RDD.ts"
export { Receiver, type ReceiverInfo } from "./Receiver.ts"
export {
  createRateEstimator,
  isBackPressureEnabled,
  PIDRateEstimator,
  RateController,
  type RateEstimator,
  ReceiverRateLimit
} from "./PIDRateEstimator.ts"
export { ReceiverInputDStream } from "./ReceiverInputDStream.ts"
export { DirectInputDStream, type DirectOffsetRange } from "./DirectInputDStream.ts"
export { type ConsumerRecord, KafkaUtils } from "./KafkaUtils.ts"
export { SocketReceiver } from "./SocketReceiver.ts"
export { type MappingFunction, type State, StateSpec, type TimedMappingFunction } from "./State.ts"
export type {
  BatchInfo,
  OutputOperationInfo,
  StreamInputInfo,
  StreamingListener
} from "./StreamingListener.ts"
export {
  IllegalStateError,
  StreamingQueryError,
  CheckpointError,
  StateStoreError,
  ConnectorError
} from "../core/Errors.ts"
