/**
 * The per-batch work of Spark's `PairRDDFunctions` (`reduceByKey`, `groupByKey`, `combineByKey`,
 * `cogroup`, the joins) as plain loops over arrays of `[key, value]` pairs.
 *
 * Keys compare by value: primitives as themselves, anything else (tuples, objects) by its JSON
 * text, the way Spark compares keys with `equals`/`hashCode` of case classes and tuples. Output
 * keys come in the order they were first seen (Spark's order follows hash partitions; its
 * suites compare these results as sets).
 *
 * @since 0.1.0
 */

/** A Map key for a pair key: the value itself when primitive, its JSON text otherwise. */
export const hashKey = (k: unknown): unknown =>
  k === null || (typeof k !== "object" && typeof k !== "function") ? k : `\u0001${JSON.stringify(k)}`

/** The state-store key of a pair key (store keys are strings). */
export const storeKey = (k: unknown): string => JSON.stringify(k === undefined ? null : k)

export const countByValue = <T>(items: ReadonlyArray<T>): Array<readonly [T, number]> => {
  const counts = new Map<unknown, [T, number]>()
  for (let i = 0; i < items.length; i++) {
    const h = hashKey(items[i])
    const e = counts.get(h)
    if (e === undefined) counts.set(h, [items[i], 1])
    else e[1]++
  }
  return Array.from(counts.values(), (e) => [e[0], e[1]] as const)
}

export const combineByKey = <K, V, C>(
  pairs: ReadonlyArray<readonly [K, V]>,
  createCombiner: (v: V) => C,
  mergeValue: (c: C, v: V) => C
): Array<readonly [K, C]> => {
  const acc = new Map<unknown, [K, C]>()
  for (let i = 0; i < pairs.length; i++) {
    const [k, v] = pairs[i]
    const h = hashKey(k)
    const e = acc.get(h)
    if (e === undefined) acc.set(h, [k, createCombiner(v)])
    else e[1] = mergeValue(e[1], v)
  }
  return Array.from(acc.values(), (e) => [e[0], e[1]] as const)
}

export const reduceByKey = <K, V>(
  pairs: ReadonlyArray<readonly [K, V]>,
  f: (a: V, b: V) => V
): Array<readonly [K, V]> => combineByKey(pairs, (v) => v, f)

export const groupByKey = <K, V>(pairs: ReadonlyArray<readonly [K, V]>): Array<readonly [K, Array<V>]> =>
  combineByKey<K, V, Array<V>>(
    pairs,
    (v) => [v],
    (c, v) => {
      c.push(v)
      return c
    }
  )

/** Groups of several pair lists by key: `[key, [values of list 0, values of list 1, ...]]`. */
export const cogroupMany = <K>(
  lists: ReadonlyArray<ReadonlyArray<readonly [K, unknown]>>
): Array<readonly [K, Array<Array<unknown>>]> => {
  const groups = new Map<unknown, [K, Array<Array<unknown>>]>()
  for (let l = 0; l < lists.length; l++) {
    const pairs = lists[l]
    for (let i = 0; i < pairs.length; i++) {
      const [k, v] = pairs[i]
      const h = hashKey(k)
      let e = groups.get(h)
      if (e === undefined) {
        e = [k, lists.map(() => [])]
        groups.set(h, e)
      }
      e[1][l].push(v)
    }
  }
  return Array.from(groups.values(), (e) => [e[0], e[1]] as const)
}

export const cogroup = <K, V, W>(
  left: ReadonlyArray<readonly [K, V]>,
  right: ReadonlyArray<readonly [K, W]>
): Array<readonly [K, readonly [Array<V>, Array<W>]]> =>
  cogroupMany<K>([left, right]).map(([k, [vs, ws]]) => [k, [vs as Array<V>, ws as Array<W>]] as const)

/**
 * Spark's joins on pair RDDs: every pairing of a key's left and right values; the outer joins
 * give `undefined` (Scala's `None`) for the missing side.
 */
export const join = <K, V, W>(
  left: ReadonlyArray<readonly [K, V]>,
  right: ReadonlyArray<readonly [K, W]>,
  how: "inner" | "left" | "right" | "full"
): Array<readonly [K, readonly [V | undefined, W | undefined]]> => {
  const out: Array<readonly [K, readonly [V | undefined, W | undefined]]> = []
  for (const [k, [vs, ws]] of cogroup(left, right)) {
    if (vs.length > 0 && ws.length > 0) {
      for (const v of vs) for (const w of ws) out.push([k, [v, w]])
    } else if (vs.length > 0 && (how === "left" || how === "full")) {
      for (const v of vs) out.push([k, [v, undefined]])
    } else if (ws.length > 0 && (how === "right" || how === "full")) {
      for (const w of ws) out.push([k, [undefined, w]])
    }
  }
  return out
}
