/**
 * A `StreamingContext` as the dashboard shows it (Spark UI's Streaming tab): a listener on the
 * context keeps its recent batches (`spark.streaming.ui.retainedBatches`, 1000 as in Spark) and
 * its receivers, and tells the session's dashboard when they change. `structured/` never
 * imports `dstream/`, so the context registers this view on the session at start.
 *
 * @since 0.1.0
 */
import type {
  StreamingContextBatchView,
  StreamingContextReceiverView,
  StreamingContextView
} from "../structured/api/Dashboard.ts"
import type { SessionShape } from "../structured/api/Session.ts"
import type { BatchInfo, StreamingListener } from "./StreamingListener.ts"

/** What the view needs of its context. */
export interface ViewedContext {
  readonly id: string
  readonly batchDuration: number
  readonly session: SessionShape
  readonly addStreamingListener: (listener: StreamingListener) => void
  readonly currentState: () => "INITIALIZED" | "ACTIVE" | "STOPPED"
  readonly failure: () => { readonly message: string; readonly batchTime: number | undefined } | undefined
}

const toBatch = (info: BatchInfo, status: StreamingContextBatchView["status"]): StreamingContextBatchView => ({
  batchTime: info.batchTime,
  numRecords: info.numRecords,
  submissionTime: info.submissionTime,
  processingStartTime: info.processingStartTime,
  processingEndTime: info.processingEndTime,
  schedulingDelay: info.schedulingDelay,
  processingDelay: info.processingDelay,
  totalDelay: info.totalDelay,
  status,
  outputOperations: [...info.outputOperationInfos.values()].map((o) => ({
    id: o.id,
    name: o.name,
    duration: o.duration,
    failureReason: o.failureReason
  }))
})

/**
 * Registers the dashboard's view of `context` on its session (once; a restarted context keeps
 * its view) and returns a function that tells the dashboard the view changed.
 */
export const registerView = (context: ViewedContext, startTime: number): (() => void) => {
  const state = context.session.state
  const notify = () => {
    for (const w of state.streamingContextWatchers) {
      try {
        w(context.id)
      } catch {
        // A failing watcher must not fail a batch.
      }
    }
  }
  if (state.streamingContextViews.some((v) => v.id === context.id)) return notify
  const retained = Math.max(1, Number(state.conf.get("spark.streaming.ui.retainedBatches") ?? "1000") || 1000)
  const batches: Array<StreamingContextBatchView> = []
  const receivers = new Map<number, StreamingContextReceiverView>()
  const put = (info: BatchInfo, status: StreamingContextBatchView["status"]) => {
    const i = batches.findIndex((b) => b.batchTime === info.batchTime)
    if (i >= 0) batches[i] = toBatch(info, status)
    else {
      batches.push(toBatch(info, status))
      if (batches.length > retained) batches.splice(0, batches.length - retained)
    }
    notify()
  }
  const receiver = ({ receiverInfo: r }: { readonly receiverInfo: StreamingContextReceiverView }) => {
    receivers.set(r.streamId, {
      streamId: r.streamId,
      name: r.name,
      active: r.active,
      location: r.location,
      lastErrorMessage: r.lastErrorMessage,
      lastErrorTime: r.lastErrorTime
    })
    notify()
  }
  context.addStreamingListener({
    onBatchSubmitted: ({ batchInfo }) => put(batchInfo, "queued"),
    onBatchStarted: ({ batchInfo }) => put(batchInfo, "processing"),
    onBatchCompleted: ({ batchInfo }) => put(batchInfo, "completed"),
    onOutputOperationCompleted: ({ outputOperationInfo: o }) => {
      if (o.failureReason === undefined) return
      const i = batches.findIndex((b) => b.batchTime === o.batchTime)
      if (i >= 0) {
        const b = batches[i]!
        batches[i] = {
          ...b,
          status: "failed",
          outputOperations: b.outputOperations.map((op) =>
            op.id === o.id ? { id: o.id, name: o.name, duration: o.duration, failureReason: o.failureReason } : op
          )
        }
      }
      notify()
    },
    onReceiverStarted: receiver,
    onReceiverStopped: receiver,
    onReceiverError: receiver
  })
  const view: StreamingContextView = {
    id: context.id,
    batchDurationMs: context.batchDuration,
    startTime,
    state: context.currentState,
    batches: () => batches.slice(),
    receivers: () => [...receivers.values()].sort((a, b) => a.streamId - b.streamId),
    error: context.failure
  }
  state.streamingContextViews.push(view)
  return notify
}
