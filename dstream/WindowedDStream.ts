/**
 * Spark's `WindowedDStream`: at each slide time, the union of the parent's batches in the
 * window `(time - window, time]`. Window and slide must be multiples of the parent's slide
 * (checked by `DStream.window` with Spark's messages).
 *
 * @since 0.1.0
 */
import { RDD } from "./RDD.ts"
import { DStreamNode } from "./Node.ts"

export class WindowedDStream<T> extends DStreamNode<T> {
  readonly name = "WindowedDStream"
  readonly dependencies: ReadonlyArray<DStreamNode<any>>
  readonly windowMs: number
  readonly #parent: DStreamNode<T>
  readonly #slideMs: number

  constructor(parent: DStreamNode<T>, windowMs: number, slideMs: number) {
    super(parent.ctx)
    this.#parent = parent
    this.windowMs = windowMs
    this.#slideMs = slideMs
    this.dependencies = [parent]
    // Spark persists the parent: its batches are reused by several windows.
    parent.persist("MEMORY_ONLY_SER")
  }

  /**
   * Spark's `WindowedDStream.persist`: persisting the window persists the parent (whose batches
   * the windows reuse); the window's own level stays `NONE` (WindowOperationsSuite "window -
   * persistence level").
   */
  override persist(level: string): void {
    this.#parent.persist(level)
  }

  slideMs(): number {
    return this.#slideMs
  }

  override parentRememberMs(): number {
    return (this.rememberMs ?? 0) + this.windowMs
  }

  compute(time: number): RDD<T> | undefined {
    const rdds = this.#parent.slice(time - this.windowMs + this.#parent.slideMs(), time)
    const parts: Array<ReadonlyArray<T>> = []
    for (const rdd of rdds) for (const p of rdd.partitions) parts.push(p)
    return new RDD(parts)
  }
}

/** Spark's window checks; the message of the first failure, or `undefined`. */
export const checkWindow = (
  kind: "windowed DStream" | "ReducedWindowedDStream",
  windowMs: number,
  slideMs: number,
  parentSlideMs: number
): string | undefined => {
  // Spark's wording differs between the two classes ("must be a multiple" / "must be multiple").
  const must = kind === "windowed DStream" ? "must be a multiple" : "must be multiple"
  if (windowMs % parentSlideMs !== 0) {
    return `The window duration of ${kind} (${windowMs} ms) ${must} of the slide duration of parent DStream (${parentSlideMs} ms)`
  }
  if (slideMs % parentSlideMs !== 0) {
    return `The slide duration of ${kind} (${slideMs} ms) ${must} of the slide duration of parent DStream (${parentSlideMs} ms)`
  }
  return undefined
}
