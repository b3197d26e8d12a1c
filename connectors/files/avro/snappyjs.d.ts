/** Types of the `snappyjs` package (it ships none): raw Snappy blocks, as Avro's `snappy` codec frames them. */
declare module "snappyjs" {
  export function compress<B extends Uint8Array | ArrayBuffer>(input: B): B
  export function uncompress<B extends Uint8Array | ArrayBuffer>(input: B, maxLength?: number): B
  const snappy: { compress: typeof compress; uncompress: typeof uncompress }
  export default snappy
}
