/**
 * `StreamingListener`: callbacks on a StreamingContext's life, batches, output operations and
 * receivers, with the fields of Spark's `BatchInfo`, `OutputOperationInfo` and `ReceiverInfo`
 * (`streaming/.../scheduler/StreamingListener.scala`, `BatchInfo.scala`). Every callback is
 * optional and synchronous; an exception in one is ignored (Spark's listener bus logs it).
 *
 * @example
 * ```ts
 * import type { StreamingListener } from "tributary-streaming/dstream"
 * const delays: Array<number | undefined> = []
 * const listener: StreamingListener = { onBatchCompleted: ({ batchInfo }) => delays.push(batchInfo.totalDelay) }
 * // ssc.addStreamingListener(listener)
 * ```
 * @since 0.1.0
 */
import type { ReceiverInfo } from "./Receiver.ts"

export type { ReceiverInfo }

/** Spark's `StreamInputInfo`: what one input stream gave a batch. */
export interface StreamInputInfo {
  readonly inputStreamId: number
  readonly numRecords: number
  readonly metadata: Readonly<Record<string, unknown>>
}

/** Spark's `OutputOperationInfo`. */
export interface OutputOperationInfo {
  readonly batchTime: number
  readonly id: number
  readonly name: string
  readonly description: string
  readonly startTime: number | undefined
  readonly endTime: number | undefined
  readonly failureReason: string | undefined
  /** `endTime - startTime`, when both are known. */
  readonly duration: number | undefined
}

/** Spark's `BatchInfo`: times are clock milliseconds, delays are milliseconds. */
export interface BatchInfo {
  readonly batchTime: number
  readonly streamIdToInputInfo: ReadonlyMap<number, StreamInputInfo>
  readonly submissionTime: number
  readonly processingStartTime: number | undefined
  readonly processingEndTime: number | undefined
  readonly outputOperationInfos: ReadonlyMap<number, OutputOperationInfo>
  /** `processingStartTime - submissionTime`. */
  readonly schedulingDelay: number | undefined
  /** `processingEndTime - processingStartTime`. */
  readonly processingDelay: number | undefined
  /** `processingEndTime - submissionTime`. */
  readonly totalDelay: number | undefined
  /** Records of every input stream in this batch. */
  readonly numRecords: number
}

/**
 * Listener callbacks (all optional).
 *
 * @since 0.1.0
 */
export interface StreamingListener {
  readonly onStreamingStarted?: (event: { readonly time: number }) => void
  readonly onReceiverStarted?: (event: { readonly receiverInfo: ReceiverInfo }) => void
  readonly onReceiverError?: (event: { readonly receiverInfo: ReceiverInfo }) => void
  readonly onReceiverStopped?: (event: { readonly receiverInfo: ReceiverInfo }) => void
  readonly onBatchSubmitted?: (event: { readonly batchInfo: BatchInfo }) => void
  readonly onBatchStarted?: (event: { readonly batchInfo: BatchInfo }) => void
  readonly onBatchCompleted?: (event: { readonly batchInfo: BatchInfo }) => void
  readonly onOutputOperationStarted?: (event: { readonly outputOperationInfo: OutputOperationInfo }) => void
  readonly onOutputOperationCompleted?: (event: { readonly outputOperationInfo: OutputOperationInfo }) => void
}
