/**
 * `Receiver<T>`: custom input for `receiverStream` (Spark's `Receiver`). Extend it and
 * implement `onStart` (set up whatever delivers data — sockets, timers, callbacks — and return
 * at once) and `onStop` (tear it down). Call `store` with each item; stored items go into the
 * next batch. `restart(message, error?)` stops the receiver and starts it again after Spark's
 * `spark.streaming.receiverRestartDelay` (2 s by default, on Effect's clock); `stop(message)`
 * stops it for good; `reportError` tells the listeners without stopping. With
 * `spark.streaming.receiver.writeAheadLog.enable`, each `store`/`storeAll` call is appended to
 * the write-ahead log (fsync'd) before it returns (`ReceivedBlockLog.ts`), so stored items must
 * be JSON values.
 *
 * @example
 * ```ts
 * import { Receiver } from "tributary-streaming/dstream"
 * class Ticks extends Receiver<number> {
 *   #timer: ReturnType<typeof setInterval> | undefined
 *   onStart() { let n = 0; this.#timer = setInterval(() => this.store(n++), 100) }
 *   onStop() { clearInterval(this.#timer) }
 * }
 * // ssc.receiverStream(new Ticks())
 * ```
 * @since 0.1.0
 */
import { Effect, Queue } from "effect"
import type { ReceivedBlockLog } from "./ReceivedBlockLog.ts"

/** Spark's `ReceiverInfo`, as listeners see it. */
export interface ReceiverInfo {
  readonly streamId: number
  readonly name: string
  readonly active: boolean
  readonly location: string
  readonly executorId: string
  readonly lastErrorMessage: string
  readonly lastError: string
  readonly lastErrorTime: number
}

/** @internal what a receiver reports to its context. */
export interface ReceiverHost {
  readonly restartDelayMs: number
  readonly started: (info: ReceiverInfo) => void
  readonly stopped: (info: ReceiverInfo) => void
  readonly error: (info: ReceiverInfo) => void
  readonly now: () => number
}

type Command =
  | { readonly _tag: "restart"; readonly message: string; readonly error: unknown; readonly delayMs: number }
  | { readonly _tag: "stop"; readonly message: string; readonly error: unknown }

/**
 * The base class of custom receivers.
 *
 * @since 0.1.0
 */
export abstract class Receiver<T> {
  /** Kept for Spark compatibility (Spark's `StorageLevel` name); blocks are kept in memory here. */
  readonly storageLevel: string
  #streamId = -1
  #state: "Initialized" | "Started" | "Stopped" = "Initialized"
  #buffer: Array<T> = []
  #commands: Queue.Queue<Command> | undefined
  #host: ReceiverHost | undefined
  #lastError: { message: string; error: string; time: number } | undefined
  #log: ReceivedBlockLog | undefined = undefined

  constructor(storageLevel = "MEMORY_AND_DISK_SER_2") {
    this.storageLevel = storageLevel
  }

  /** Starts receiving: set up the data source and return (do not block). */
  abstract onStart(): void
  /** Stops receiving: release what `onStart` set up. */
  abstract onStop(): void

  /** The id of the input stream this receiver feeds. */
  get streamId(): number {
    return this.#streamId
  }

  /**
   * Stores one received item; it goes into the next batch. With the receiver write-ahead log
   * on, the item is in the log (synced to disk) when this returns; if writing fails the item is
   * not stored and the error is reported to the listeners.
   */
  store(item: T): void {
    if (this.#log !== undefined && !this.#writeLog([item])) return
    this.#buffer.push(item)
  }

  /** Stores several items at once, as one block (Spark's `store(ArrayBuffer)` / `store(Iterator)`). */
  storeAll(items: Iterable<T>): void {
    const block = Array.from(items)
    if (this.#log !== undefined && !this.#writeLog(block)) return
    for (const item of block) this.#buffer.push(item)
  }

  #writeLog(block: ReadonlyArray<T>): boolean {
    try {
      this.#log?.append(block)
      return true
    } catch (error) {
      // Spark's store throws to the receiver when the block cannot be written; a JavaScript
      // store is fire-and-forget, so the listeners hear of it instead.
      this.reportError("Error storing block in the write-ahead log", error)
      return false
    }
  }

  /**
   * @internal Turns the write-ahead log on (before the receiver starts) and puts back the items
   * a recovery found in the log (stored but not in a completed batch), ahead of new ones.
   */
  attachLog(log: ReceivedBlockLog | undefined, recovered: ReadonlyArray<T>): void {
    this.#log = log
    if (recovered.length > 0) this.#buffer = [...recovered, ...this.#buffer]
  }

  /** Stops and restarts the receiver after the restart delay (or `delayMs`). */
  restart(message: string, error?: unknown, delayMs?: number): void {
    if (this.#commands === undefined) return
    Queue.offerUnsafe(this.#commands, {
      _tag: "restart",
      message,
      error,
      delayMs: delayMs ?? this.#host?.restartDelayMs ?? 2000
    })
  }

  /** Stops the receiver for good (the context keeps running). */
  stop(message: string, error?: unknown): void {
    if (this.#commands === undefined) return
    Queue.offerUnsafe(this.#commands, { _tag: "stop", message, error })
  }

  /** Reports an error to the listeners without stopping. */
  reportError(message: string, error?: unknown): void {
    this.#recordError(message, error)
    this.#host?.error(this.#info(true))
  }

  isStarted(): boolean {
    return this.#state === "Started"
  }

  isStopped(): boolean {
    return this.#state === "Stopped"
  }

  #recordError(message: string, error: unknown): void {
    this.#lastError = {
      message,
      error: error === undefined ? "" : error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      time: this.#host?.now() ?? 0
    }
  }

  #info(active: boolean): ReceiverInfo {
    return {
      streamId: this.#streamId,
      name: this.constructor.name,
      active,
      location: "localhost",
      executorId: "driver",
      lastErrorMessage: this.#lastError?.message ?? "",
      lastError: this.#lastError?.error ?? "",
      lastErrorTime: this.#lastError?.time ?? -1
    }
  }

  #startReceiver(): void {
    this.#state = "Started"
    try {
      this.onStart()
      this.#host?.started(this.#info(true))
    } catch (error) {
      // Spark's ReceiverSupervisor.startReceiver: a failing onStart stops the receiver.
      this.stop("Error starting receiver", error)
    }
  }

  #stopReceiver(message: string, error: unknown): void {
    if (this.#state === "Started") {
      this.#state = "Stopped"
      try {
        this.onStop()
      } catch {
        // Spark logs a failing onStop and goes on.
      }
    }
    this.#state = "Stopped"
    this.#recordError(message, error)
    this.#host?.stopped(this.#info(false))
  }

  /**
   * @internal The supervisor (Spark's `ReceiverSupervisorImpl`): starts the receiver, then
   * serves its restart and stop requests until the context stops it (interrupting this).
   */
  supervise(streamId: number, host: ReceiverHost): Effect.Effect<void> {
    return Effect.gen({ self: this }, function* () {
      this.#streamId = streamId
      this.#host = host
      const commands = yield* Queue.unbounded<Command>()
      this.#commands = commands
      this.#startReceiver()
      for (;;) {
        const cmd = yield* Queue.take(commands)
        if (this.#state === "Stopped" && cmd._tag === "stop") continue
        if (cmd._tag === "stop") {
          this.#stopReceiver(cmd.message, cmd.error)
          continue
        }
        this.#stopReceiver(`Restarting receiver with delay ${cmd.delayMs}ms: ${cmd.message}`, cmd.error)
        yield* Effect.sleep(cmd.delayMs)
        this.#startReceiver()
      }
    })
  }

  /** @internal stops the receiver when the context stops. */
  shutdown(): void {
    if (this.#state !== "Stopped") this.#stopReceiver("Stopped by driver", undefined)
    this.#commands = undefined
  }

  /**
   * @internal What was stored since the last call (the block of the next batch), at most `max`
   * items; the rest waits for later batches (`spark.streaming.receiver.maxRate`).
   */
  takeBlock(max?: number): Array<T> {
    if (max === undefined || this.#buffer.length <= max) {
      const block = this.#buffer
      this.#buffer = []
      return block
    }
    return this.#buffer.splice(0, max)
  }

  /** @internal whether items are waiting for a batch (graceful stop). */
  hasPending(): boolean {
    return this.#buffer.length > 0
  }
}
