/**
 * The stateless, row-at-a-time physical operators — `ProjectExec`, `FilterExec` (expression and
 * typed predicates), `GenerateExec` (`explode` and its variants, `window`) and `MapElementsExec`
 * (`map`/`flatMap`) — as one implementation that batch, micro-batch and continuous execution all
 * run: each is compiled into a plain function from an array of rows to an array of rows.
 *
 * A chain of such operators (`statelessChain`) compiles into one function, and a `FilterExec`
 * right below a `ProjectExec` runs as one loop that projects each row it keeps, with no
 * intermediate array. `Execute.ts` memoizes a chain per plan node (`cachedChain`), so a
 * streaming query compiles its expressions once, when the first batch runs, not in every batch:
 * the same closures every batch also keep their call sites' type feedback. A chain whose
 * expressions depend on the batch (`current_timestamp()`, a nondeterministic function such as
 * `rand`) is compiled again for each batch, as before.
 *
 * @since 0.1.0
 */
import { type CompileContext, compile, compilePredicate, compileProjection, dataTypeOf } from "../../core/Compile.ts"
import * as T from "../../core/DataType.ts"
import type * as E from "../../core/Expression.ts"
import { isDeterministic } from "../../core/optimizer/Optimizer.ts"
import { type InternalRow, toExternal, toInternal } from "../../core/Row.ts"
import type * as P from "./SparkPlan.ts"

/**
 * Rows in, rows out (positional, ordered like the plan's output).
 *
 * @since 0.1.0
 */
export type RowsFn = (rows: ReadonlyArray<InternalRow>) => ReadonlyArray<InternalRow>

/**
 * The operators `statelessChain` compiles.
 *
 * @since 0.1.0
 */
export type StatelessExec = P.ProjectExec | P.FilterExec | P.GenerateExec | P.MapElementsExec

/**
 * Whether `p` is one of the operators of this module.
 *
 * @since 0.1.0
 */
export const isStateless = (p: P.SparkPlan): p is StatelessExec =>
  p._tag === "ProjectExec" || p._tag === "FilterExec" || p._tag === "GenerateExec" || p._tag === "MapElementsExec"

const MS_PER_DAY = 86_400_000

const structOf = (attrs: ReadonlyArray<E.AttributeReference>): T.StructType =>
  T.struct(attrs.map((a) => T.field(a.name, a.dataType, a.nullable)))

const project = (p: P.ProjectExec, cctx: CompileContext): RowsFn => {
  const proj = compileProjection(p.projectList, p.child.output, cctx)
  return (rows) => {
    const n = rows.length
    const out = new Array<InternalRow>(n)
    for (let i = 0; i < n; i++) out[i] = proj(rows[i])
    return out
  }
}

/** `FilterExec` (expression predicate) then `ProjectExec`, in one loop. */
const filterProject = (p: P.ProjectExec, f: P.FilterExec, keep: (row: InternalRow) => boolean, cctx: CompileContext): RowsFn => {
  const proj = compileProjection(p.projectList, f.output, cctx)
  return (rows) => {
    const out: Array<InternalRow> = []
    const n = rows.length
    for (let i = 0; i < n; i++) {
      const row = rows[i]
      if (keep(row)) out.push(proj(row))
    }
    return out
  }
}

const filter = (p: P.FilterExec, cctx: CompileContext): RowsFn => {
  switch (p.condition._tag) {
    case "Predicate": {
      const keep = compilePredicate(p.condition.expression, p.child.output, cctx)
      return (rows) => {
        const out: Array<InternalRow> = []
        const n = rows.length
        for (let i = 0; i < n; i++) if (keep(rows[i])) out.push(rows[i])
        return out
      }
    }
    case "TypedPredicate": {
      // Spark's TypedFilter deserializes each row to the user's type before calling the function.
      const external = toExternal(structOf(p.child.output))
      const keep = p.condition.predicate
      return (rows) => {
        const out: Array<InternalRow> = []
        const n = rows.length
        for (let i = 0; i < n; i++) if (keep(external(rows[i])) === true) out.push(rows[i])
        return out
      }
    }
  }
}

/** `explode`, `explode_outer`, `posexplode[_outer]` over arrays and maps. */
const explode = (p: P.GenerateExec, g: E.Explode, cctx: CompileContext): RowsFn => {
  const input = p.child.output
  const ev = compile(g.child, input, cctx)
  const isMap = dataTypeOf(g.child)._tag === "map"
  const width = input.length
  const genWidth = p.generatorOutput.length
  const pos = g.position ? 1 : 0
  return (rows) => {
    const out: Array<InternalRow> = []
    const emit = (row: InternalRow, i: number, a: unknown, b: unknown, pair: boolean): void => {
      const o = new Array<unknown>(width + genWidth)
      for (let c = 0; c < width; c++) o[c] = row[c]
      if (pos === 1) o[width] = i
      o[width + pos] = a
      if (pair) o[width + pos + 1] = b
      out.push(o)
    }
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]
      const v = ev(row)
      const size =
        v === null || v === undefined
          ? 0
          : isMap
            ? (v as Map<unknown, unknown>).size
            : (v as ReadonlyArray<unknown>).length
      if (size === 0) {
        // explode_outer / posexplode_outer: a null or empty collection still gives one row, all nulls.
        if (g.outer) {
          const o = new Array<unknown>(width + genWidth).fill(null)
          for (let c = 0; c < width; c++) o[c] = row[c]
          out.push(o)
        }
        continue
      }
      if (isMap) {
        let i = 0
        for (const [k, x] of v as Map<unknown, unknown>) emit(row, i++, k, x, true)
      } else {
        const arr = v as ReadonlyArray<unknown>
        for (let i = 0; i < arr.length; i++) emit(row, i, arr[i] === undefined ? null : arr[i], null, false)
      }
    }
    return out
  }
}

/**
 * Spark's `TimeWindowing`: for an event at `ts`, the last window starts at
 * `ts - ((ts - startTime) mod slide)` (a floor mod, so negative times work), and
 * `ceil(window / slide)` candidate windows go back from there one slide at a time, latest first.
 * When `window` is not a multiple of `slide` the candidates that do not contain `ts` are dropped.
 * Events with a null time produce no rows.
 */
const assignWindows = (p: P.GenerateExec, w: E.TimeWindow, cctx: CompileContext): RowsFn => {
  const { windowMs, slideMs, startMs } = w
  if (!(windowMs > 0) || !(slideMs > 0)) {
    throw new Error(`window(): the window (${windowMs} ms) and slide (${slideMs} ms) durations must be positive`)
  }
  const input = p.child.output
  const ev = compile(w.timeColumn, input, cctx)
  const isDate = dataTypeOf(w.timeColumn)._tag === "date"
  const count = Math.ceil(windowMs / slideMs)
  const exact = windowMs % slideMs === 0
  const width = input.length
  return (rows) => {
    const out: Array<InternalRow> = []
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]
      const raw = ev(row)
      if (raw === null || raw === undefined) continue
      const ts = isDate ? (raw as number) * MS_PER_DAY : (raw as number)
      const rem = (ts - startMs) % slideMs
      const lastStart = ts - (rem < 0 ? rem + slideMs : rem)
      for (let i = 0; i < count; i++) {
        const start = lastStart - i * slideMs
        const end = start + windowMs
        if (!exact && !(ts >= start && ts < end)) continue
        const o = new Array<unknown>(width + 1)
        for (let c = 0; c < width; c++) o[c] = row[c]
        o[width] = [start, end]
        out.push(o)
      }
    }
    return out
  }
}

/** `map(f)` / `flatMap(f)` over external rows (Spark's `MapElementsExec` / `MapPartitionsExec`). */
const mapElements = (p: P.MapElementsExec): RowsFn => {
  const external = toExternal(structOf(p.child.output))
  let toRow: (v: unknown) => InternalRow
  if (p.wrapValue) {
    const conv = toInternal(p.schema.fields[0]?.dataType ?? T.NullType)
    toRow = (v) => [conv(v)]
  } else {
    const conv = toInternal(p.schema)
    toRow = (v) => {
      const row = conv(v)
      if (row === null) {
        // Spark's encoder cannot serialize a null object as a top-level row either.
        throw new Error(`map/flatMap returned ${String(v)} where a row of ${T.simpleString(p.schema)} was expected`)
      }
      return row as InternalRow
    }
  }
  const fn = p.fn
  if (p.flat) {
    return (rows) => {
      const out: Array<InternalRow> = []
      for (let i = 0; i < rows.length; i++) for (const v of fn(external(rows[i])) as Iterable<unknown>) out.push(toRow(v))
      return out
    }
  }
  return (rows) => {
    const out = new Array<InternalRow>(rows.length)
    for (let i = 0; i < rows.length; i++) out[i] = toRow(fn(external(rows[i])))
    return out
  }
}

const then =
  (f: RowsFn, g: RowsFn): RowsFn =>
  (rows) => {
    const r = f(rows)
    return r.length === 0 ? r : g(r)
  }

/**
 * A chain of stateless operators from `top` down: `input`, the first node below them all (whose
 * rows `fn` takes), and `fn`, the chain compiled into one function.
 *
 * @since 0.1.0
 */
export interface StatelessChain {
  readonly input: P.SparkPlan
  readonly fn: RowsFn
  /** Whether the chain's expressions are the same every batch (it can be compiled once). */
  readonly reusable: boolean
}

/** The expressions of one operator (for the determinism test). */
const expressionsOf = (p: StatelessExec): ReadonlyArray<E.Expression> => {
  switch (p._tag) {
    case "ProjectExec":
      return p.projectList
    case "FilterExec":
      return p.condition._tag === "Predicate" ? [p.condition.expression] : []
    case "GenerateExec":
      return p.generator._tag === "Explode" ? [p.generator.child] : [p.generator.timeColumn]
    case "MapElementsExec":
      return []
  }
}

/**
 * Compiles the stateless operators from `top` down to the first other node.
 *
 * @since 0.1.0
 */
export const statelessChain = (top: StatelessExec, cctx: CompileContext): StatelessChain => {
  const steps: Array<RowsFn> = []
  let reusable = true
  let node: P.SparkPlan = top
  while (isStateless(node)) {
    const p: StatelessExec = node
    if (!expressionsOf(p).every(isDeterministic)) reusable = false
    if (p._tag === "ProjectExec" && p.child._tag === "FilterExec") {
      const f: P.FilterExec = p.child
      const cond = f.condition
      if (cond._tag === "Predicate") {
        if (!isDeterministic(cond.expression)) reusable = false
        steps.push(filterProject(p, f, compilePredicate(cond.expression, f.child.output, cctx), cctx))
        node = f.child
        continue
      }
    }
    switch (p._tag) {
      case "ProjectExec":
        steps.push(project(p, cctx))
        break
      case "FilterExec":
        steps.push(filter(p, cctx))
        break
      case "GenerateExec":
        steps.push(
          p.generator._tag === "Explode" ? explode(p, p.generator, cctx) : assignWindows(p, p.generator, cctx)
        )
        break
      case "MapElementsExec":
        steps.push(mapElements(p))
        break
    }
    node = p.child
  }
  // `steps` runs top-down; the rows go bottom-up.
  let fn = steps[steps.length - 1]
  for (let i = steps.length - 2; i >= 0; i--) fn = then(fn, steps[i])
  return { input: node, fn, reusable }
}

const chains = new WeakMap<StatelessExec, StatelessChain>()

/**
 * `statelessChain(top, cctx)`, compiled once per plan node when its expressions allow it
 * (`reusable`), else again for this `cctx`.
 *
 * @since 0.1.0
 */
export const cachedChain = (top: StatelessExec, cctx: CompileContext): StatelessChain => {
  const known = chains.get(top)
  if (known !== undefined) return known
  const chain = statelessChain(top, cctx)
  if (chain.reusable) chains.set(top, chain)
  return chain
}
