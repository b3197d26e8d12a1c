/**
 * Spark's `SocketReceiver` (`socketTextStream`): connects to `host:port` over TCP (`node:net`,
 * which Deno supports too) and stores each line (UTF-8, without its `\n` or `\r\n`). When the
 * connection fails or the server closes it, the receiver restarts after the restart delay, as
 * Spark's does ("Error connecting to host:port", "Socket data stream had no more data").
 *
 * Like Spark's socket source it cannot replay: lines received but not yet in a batch are lost
 * if the process dies.
 *
 * @since 0.1.0
 */
import { createConnection, type Socket } from "node:net"
import { Receiver } from "./Receiver.ts"

export class SocketReceiver extends Receiver<string> {
  readonly host: string
  readonly port: number
  #socket: Socket | undefined

  constructor(host: string, port: number, storageLevel?: string) {
    super(storageLevel)
    this.host = host
    this.port = port
  }

  onStart(): void {
    let partial = ""
    let done = false
    const socket = createConnection({ host: this.host, port: this.port })
    this.#socket = socket
    socket.setEncoding("utf8")
    const finish = (message: string, error?: unknown) => {
      if (done) return
      done = true
      if (partial.length > 0) this.store(partial)
      partial = ""
      if (!this.isStopped()) this.restart(message, error)
    }
    socket.on("data", (chunk: string) => {
      const text = partial + chunk
      const lines = text.split("\n")
      partial = lines.pop() ?? ""
      for (const line of lines) this.store(line.endsWith("\r") ? line.slice(0, -1) : line)
    })
    socket.on("error", (error) => {
      const connected = socket.bytesRead > 0 || socket.remoteAddress !== undefined
      finish(connected ? "Error receiving data" : `Error connecting to ${this.host}:${this.port}`, error)
    })
    socket.on("end", () => finish("Socket data stream had no more data"))
    socket.on("close", () => finish("Socket data stream had no more data"))
  }

  onStop(): void {
    const s = this.#socket
    this.#socket = undefined
    s?.destroy()
  }
}
