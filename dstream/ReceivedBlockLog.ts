/**
 * The receiver write-ahead log (Spark's `WriteAheadLogBasedBlockHandler` with its
 * `FileBasedWriteAheadLog`), on when `spark.streaming.receiver.writeAheadLog.enable` is true.
 *
 * Every `store`/`storeAll` call of a receiver is one block: it is appended as one JSON line to
 * the current log file under `<checkpoint>/receivedData/<streamId>/` and flushed with `fsync`
 * before the call returns and the items count as received — so a stored item survives a crash
 * of the process. Items must therefore be JSON values (Spark requires serializable records).
 *
 * Records are numbered in the order they were stored; a log file is named `log-<n>` after the
 * number of its first record. After each completed batch the context checkpoints how many
 * records batches have consumed; on restart through `StreamingContext.getOrCreate` the records
 * from that number on (those of batches that did not complete, and those not yet in a batch)
 * go back to the receiver's buffer, so the next batches process them. Files whose records were
 * all consumed by completed batches are deleted (Spark's `cleanupOldBlocks`); the current file
 * is closed after each batch so it can be deleted once consumed.
 *
 * Writing is synchronous (`writeSync` + `fsyncSync`) because `store` is a synchronous call —
 * as Spark's `store(ArrayBuffer)` blocks until the block is in the log.
 *
 * Integrity: each line is `<CRC-32 of the JSON, 8 hex digits>\t<JSON>` (lines without the
 * checksum, from older versions, are still read). The last line of a file may be cut short — a
 * kill while appending, before `store` returned — and is skipped, as Spark's
 * `FileBasedWriteAheadLogReader` stops at a torn record. Anything else that does not check out
 * fails the recovery naming the file (`ReceivedBlockLogCorrupt`): a complete line with another
 * checksum (a bit flip), or a file with fewer or more records than the next file's name says
 * (a truncation or a lost file), since those records were acknowledged to `store`.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { crc32 } from "../core/Checksum.ts"

const FILE_PREFIX = "log-"

/** The folder of stream `streamId`'s log under a checkpoint directory. */
export const receivedDataDir = (checkpointDir: string, streamId: number): string =>
  path.join(checkpointDir, "receivedData", String(streamId))

interface LogFile {
  readonly start: number
  readonly name: string
}

/**
 * The receiver log holds a record that does not check out: `path` names the file.
 *
 * @since 0.1.0
 */
export class ReceivedBlockLogCorrupt extends Error {
  readonly path: string
  constructor(path: string, why: string) {
    super(`The receiver write-ahead log file ${path} is damaged: ${why}.`)
    this.path = path
  }
}

const encoder = new TextEncoder()

const crcHex = (json: string): string => crc32(encoder.encode(json)).toString(16).padStart(8, "0")

/** The items of one complete log line, or why it is not a record. */
const parseLine = (line: string): Array<unknown> | string => {
  let json = line
  const m = /^([0-9a-f]{8})\t/.exec(line)
  if (m !== null) {
    json = line.slice(9)
    if (crcHex(json) !== m[1]) return "its checksum does not match"
  } else if (!line.startsWith("[")) return "it is not a log record"
  let items: unknown
  try {
    items = JSON.parse(json)
  } catch {
    return "it is not JSON"
  }
  return Array.isArray(items) ? items : "it is not a block of records"
}

/**
 * One receiver stream's write-ahead log.
 *
 * @since 0.1.0
 */
export class ReceivedBlockLog {
  readonly dir: string
  /** Records appended so far (numbered from 0 over the life of the checkpoint). */
  #count = 0
  #fd: number | undefined = undefined
  #files: Array<LogFile> = []

  constructor(dir: string) {
    this.dir = dir
  }

  /** Records appended so far. */
  get count(): number {
    return this.#count
  }

  /** Starts afresh: removes any log left in the folder (a new context, not a recovery). */
  reset(): void {
    this.close()
    fs.rmSync(this.dir, { recursive: true, force: true })
    fs.mkdirSync(this.dir, { recursive: true })
    this.#files = []
    this.#count = 0
  }

  /**
   * Reads the log and returns the records numbered `consumed` and later (not in a completed
   * batch). A last line cut short by a crash was never acknowledged to `store`; it is skipped.
   */
  recover(consumed: number): Array<unknown> {
    this.close()
    fs.mkdirSync(this.dir, { recursive: true })
    const files = fs
      .readdirSync(this.dir)
      .filter((n) => n.startsWith(FILE_PREFIX) && Number.isInteger(Number(n.slice(FILE_PREFIX.length))))
      .map((name) => ({ name, start: Number(name.slice(FILE_PREFIX.length)) }))
      .sort((a, b) => a.start - b.start)
    const pending: Array<unknown> = []
    let count = files[0]?.start ?? consumed
    if (files.length > 0 && files[0].start > consumed) {
      throw new ReceivedBlockLogCorrupt(
        path.join(this.dir, files[0].name),
        `the log in ${this.dir} starts at record ${files[0].start}, but the checkpoint's batches consumed only ${consumed}: the file of records ${consumed} to ${files[0].start - 1} is missing`
      )
    }
    for (let f = 0; f < files.length; f++) {
      const file = files[f]
      const filePath = path.join(this.dir, file.name)
      count = file.start
      const lines = fs.readFileSync(filePath, "utf8").split("\n")
      // After the last newline: a line cut short by a kill while appending (or nothing).
      lines.pop()
      for (let i = 0; i < lines.length; i++) {
        const items = parseLine(lines[i])
        if (typeof items === "string") throw new ReceivedBlockLogCorrupt(filePath, `line ${i + 1}: ${items}`)
        for (const item of items) {
          if (count >= consumed) pending.push(item)
          count++
        }
      }
      const next = files[f + 1]
      if (next !== undefined && count !== next.start) {
        throw new ReceivedBlockLogCorrupt(
          filePath,
          `it holds records ${file.start} to ${count - 1}, but the next file ${next.name} starts at record ${next.start}: records were lost (a truncated or missing file)`
        )
      }
    }
    this.#files = files
    this.#count = Math.max(count, consumed)
    return pending
  }

  /** Appends one block and syncs it to disk; throws on an I/O error (the block is not stored). */
  append(items: ReadonlyArray<unknown>): void {
    if (items.length === 0) return
    const json = JSON.stringify(items)
    const line = `${crcHex(json)}\t${json}\n`
    if (this.#fd === undefined) {
      fs.mkdirSync(this.dir, { recursive: true })
      const name = `${FILE_PREFIX}${this.#count}`
      this.#fd = fs.openSync(path.join(this.dir, name), "a")
      this.#files.push({ name, start: this.#count })
    }
    fs.writeSync(this.#fd, line)
    fs.fsyncSync(this.#fd)
    this.#count += items.length
  }

  /** Closes the current file; the next block starts a new one. */
  close(): void {
    if (this.#fd !== undefined) {
      try {
        fs.closeSync(this.#fd)
      } catch {
        // Already closed: nothing to release.
      }
      this.#fd = undefined
    }
  }

  /**
   * Closes the current file and deletes the files whose records are all below `consumed`
   * (consumed by completed batches); returns the names deleted.
   */
  clean(consumed: number): Array<string> {
    this.close()
    const deleted: Array<string> = []
    const kept: Array<LogFile> = []
    for (let i = 0; i < this.#files.length; i++) {
      const file = this.#files[i]
      const end = this.#files[i + 1]?.start ?? this.#count
      if (end <= consumed) {
        fs.rmSync(path.join(this.dir, file.name), { force: true })
        deleted.push(file.name)
      } else {
        kept.push(file)
      }
    }
    this.#files = kept
    return deleted
  }
}
