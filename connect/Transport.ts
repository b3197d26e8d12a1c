/**
 * The gRPC transport of the Spark Connect client, behind an Effect service so that tests and
 * other runtimes can provide their own. Needs none of the generated protocol code.
 *
 * @since 0.3.0
 */
import type { Interceptor, Transport } from "@connectrpc/connect"
import { createGrpcTransport } from "@connectrpc/connect-node"
import { Context, Layer } from "effect"
import type { ConnectAddress } from "./Address.ts"

/** What `SparkConnectTransport` provides. */
interface SparkConnectTransportShape {
  readonly make: (address: ConnectAddress, interceptors: ReadonlyArray<Interceptor>) => Transport
}
const SparkConnectTransportBase: Context.ServiceClass<
  SparkConnectTransport,
  "tributary/SparkConnectTransport",
  SparkConnectTransportShape
> = Context.Service<SparkConnectTransport, SparkConnectTransportShape>()("tributary/SparkConnectTransport")

/** Makes the gRPC transport for an address; a service so that the transport can be replaced. */
export class SparkConnectTransport extends SparkConnectTransportBase {
  /** HTTP/2 gRPC through `@connectrpc/connect-node` (Node; Deno's `node:http2` too). */
  static readonly node: Layer.Layer<SparkConnectTransport> = Layer.succeed(SparkConnectTransport, {
    make: (address, interceptors) =>
      createGrpcTransport({
        baseUrl: `${address.useSsl ? "https" : "http"}://${address.host}:${address.port}`,
        interceptors: [...interceptors],
        // Results of large queries arrive in Arrow batches of up to Spark's 4 MiB default and more.
        readMaxBytes: 512 * 1024 * 1024
      })
  })
}
