import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as T from "../../../core/DataType.ts"
import type * as E from "../../../core/Expression.ts"
import type { InternalRow } from "../../../core/Row.ts"
import { plan } from "../../../structured/physical/Planner.ts"
import { attr, limit, local, runPlan, sort } from "./fixtures.ts"

const a = attr("a")
const b = attr("b", T.StringType)
const i = attr("i")

const orderArb: fc.Arbitrary<E.SortOrder> = fc
  .record({
    child: fc.constantFrom<E.Expression>(a, b),
    direction: fc.constantFrom<"asc" | "desc">("asc", "desc"),
    nullOrdering: fc.constantFrom<"nullsFirst" | "nullsLast">("nullsFirst", "nullsLast")
  })
  .map((o) => ({ _tag: "SortOrder", ...o }))

const rowsArb: fc.Arbitrary<ReadonlyArray<InternalRow>> = fc
  .array(
    fc.tuple(
      fc.option(fc.integer({ min: -5, max: 5 }), { nil: null }),
      fc.option(fc.constantFrom("x", "y", "z"), { nil: null })
    ),
    {
      maxLength: 60
    }
  )
  // The third column is the arrival index, so stability is visible in the result.
  .map((rs) => rs.map(([x, y], idx) => [x, y, idx]))

/** A stable reference sort, written independently of the operator. */
const referenceSort = (
  rows: ReadonlyArray<InternalRow>,
  order: ReadonlyArray<E.SortOrder>
): ReadonlyArray<InternalRow> => {
  const pos = (e: E.Expression) => (e === a ? 0 : 1)
  return [...rows].sort((r, s) => {
    for (const o of order) {
      const x = r[pos(o.child)]
      const y = s[pos(o.child)]
      if (x === null && y === null) continue
      if (x === null || y === null) {
        const c = x === null ? -1 : 1
        return o.nullOrdering === "nullsFirst" ? c : -c
      }
      const c = x! < y! ? -1 : x! > y! ? 1 : 0
      if (c !== 0) return o.direction === "asc" ? c : -c
    }
    return 0
  })
}

describe("top-k (TakeOrderedAndProject) equals sort + limit", () => {
  it("plans Limit over a global Sort as a top-k and over a local one as Limit over Sort", () => {
    const rel = local([a, b, i], [])
    expect(
      plan(limit(3, sort([{ _tag: "SortOrder", child: a, direction: "asc", nullOrdering: "nullsFirst" }], rel)))._tag
    ).toBe("TakeOrderedAndProjectExec")
    expect(
      plan(limit(3, sort([{ _tag: "SortOrder", child: a, direction: "asc", nullOrdering: "nullsFirst" }], rel, false)))
        ._tag
    ).toBe("LimitExec")
  })

  it("for random rows, orders and limits", async () => {
    await fc.assert(
      fc.asyncProperty(
        rowsArb,
        fc.array(orderArb, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 0, max: 70 }),
        async (rows, order, n) => {
          const rel = local([a, b, i], rows)
          const topk = await runPlan(limit(n, sort(order, rel, true)))
          const sortThenLimit = await runPlan(limit(n, sort(order, rel, false)))
          expect(topk).toEqual(sortThenLimit)
          expect(topk).toEqual(referenceSort(rows, order).slice(0, n))
        }
      ),
      { numRuns: 300 }
    )
  })
})
