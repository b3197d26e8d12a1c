/**
 * `translateExpression` of `F.expr` / `selectExpr` / `filter("…")`: the text goes to Spark as
 * `Expression.ExpressionString` (pyspark's mapping), also inside a larger column, and a text
 * that does not parse locally is still sent (Spark parses with its own grammar).
 */
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import type * as PE from "../../connect/gen/spark/connect/expressions_pb.ts"
import { translateExpression } from "../../connect/Translate.ts"
import { F } from "../../mod.ts"

const translated = (e: Parameters<typeof translateExpression>[0]): PE.Expression => {
  const r = translateExpression(e)
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}

describe("expression strings over Spark Connect", () => {
  it("F.expr is an ExpressionString of its text", () => {
    expect(translated(F.expr("upper(name) AS n").expr).exprType).toMatchObject({
      case: "expressionString",
      value: { expression: "upper(name) AS n" }
    })
  })

  it("inside a larger column, the parsed part is still the text", () => {
    const t = translated(F.expr("a + 1").multiply(2).expr)
    expect(t.exprType.case).toBe("unresolvedFunction")
    const args = (t.exprType.value as PE.Expression_UnresolvedFunction).arguments
    expect(args[0].exprType).toMatchObject({ case: "expressionString", value: { expression: "a + 1" } })
  })

  it("text that tributary cannot parse or evaluate is sent for Spark to parse", () => {
    expect(translated(F.expr("transform(a, x -> x)").expr).exprType).toMatchObject({
      case: "expressionString",
      value: { expression: "transform(a, x -> x)" }
    })
    expect(translated(F.expr("a +").expr).exprType).toMatchObject({
      case: "expressionString",
      value: { expression: "a +" }
    })
  })

  it("a column built with F is translated structurally, as before", () => {
    expect(translated(F.col("a").plus(1).expr).exprType.case).toBe("unresolvedFunction")
  })
})
