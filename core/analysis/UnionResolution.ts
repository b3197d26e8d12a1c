/**
 * Unions in the analyzer: `unionByName` reorders every child to the first child's names (Spark's
 * `ResolveUnion`, with `allowMissingColumns` adding null columns), the children must have as
 * many columns, and columns of different types are widened to a common type (Spark's
 * `WidenSetOperationTypes`) or fail with `INCOMPATIBLE_COLUMN_TYPE`.
 *
 * @since 0.1.0
 */
import * as T from "../DataType.ts"
import * as E from "../Expression.ts"
import type * as P from "../LogicalPlan.ts"
import { output } from "./PlanOutput.ts"
import type { Resolver } from "./Resolver.ts"
import { stableExprId, stablePlanId } from "./StableIds.ts"
import {
  equalsType,
  failClass,
  findWiderCommonType,
  findWiderTypeForTwo,
  implicitCast,
  ordinalNumber,
  toSQLId,
  toSQLType
} from "./TypeCoercion.ts"

export const resolveUnion = (r: Resolver, p: P.Union): P.LogicalPlan => {
  let children = p.children.map((c) => r.resolve(c))
  if (children.length === 0) return p
  if (p.byName) children = unionByName(r, children, p)
  const widened = widenSetOperation(r, p, children, "UNION")
  return widened === undefined ? { ...p, children } : { ...p, children: widened }
}

/**
 * `intersect`, `intersectAll`, `except`, `exceptAll`: columns matched by position, as for a
 * union (Spark's `CheckAnalysis` for every `SetOperation` and `WidenSetOperationTypes`); the
 * operator is named in errors by Spark's `toSQLStmt(nodeName)` (`INTERSECTALL`, `EXCEPT`, …).
 */
export const resolveSetOperation = (r: Resolver, p: P.Intersect | P.Except): P.LogicalPlan => {
  const left = r.resolve(p.left)
  const right = r.resolve(p.right)
  const name = `${p._tag}${p.isAll ? "All" : ""}`.toUpperCase()
  const widened = widenSetOperation(r, p, [left, right], name)
  // CheckAnalysis's mapColumnInSetOperation: map values have no equality
  refuseMapColumns(output(widened?.[0] ?? left))
  if (widened !== undefined) return { ...p, left: widened[0], right: widened[1] }
  return left === p.left && right === p.right ? p : { ...p, left, right }
}

/**
 * CheckAnalysis's `mapColumnInSetOperation`: map values have no equality, so `intersect`,
 * `except`, `distinct` (over every column) and `dropDuplicates` (over its keys) refuse a map column.
 */
export const refuseMapColumns = (columns: ReadonlyArray<E.AttributeReference>): void => {
  const mapCol = columns.find((a) => hasMapType(a.dataType))
  if (mapCol !== undefined) {
    failClass(
      "DataTypeMismatch",
      "UNSUPPORTED_FEATURE.SET_OPERATION_ON_MAP_TYPE",
      `The feature is not supported: Cannot have MAP type columns in DataFrame which calls set operations (INTERSECT, EXCEPT, etc.), but the type of column ${toSQLId(mapCol.name)} is ${toSQLType(mapCol.dataType)}.`
    )
  }
}

const hasMapType = (t: T.DataType): boolean => {
  switch (t._tag) {
    case "map":
      return true
    case "array":
      return hasMapType(t.elementType)
    case "struct":
      return t.fields.some((f) => hasMapType(f.dataType))
    default:
      return false
  }
}

/**
 * The column count check and type widening shared by every set operation: `undefined` when the
 * children already agree on every column type, else the children with casts added.
 */
const widenSetOperation = (
  r: Resolver,
  p: P.LogicalPlan,
  children: ReadonlyArray<P.LogicalPlan>,
  operator: string
): Array<P.LogicalPlan> | undefined => {
  const first = output(children[0])
  children.slice(1).forEach((c, ti) => {
    const n = output(c).length
    if (n !== first.length) {
      failClass(
        "InvalidPlan",
        "NUM_COLUMNS_MISMATCH",
        `${operator} can only be performed on inputs with the same number of columns, but the first input has ${first.length} columns and the ${ordinalNumber(ti + 1)} input has ${n} columns.`
      )
    }
  })
  // WidenSetOperationTypes + CheckAnalysis
  const outs = children.map(output)
  const needsWidening = first.some((_, i) => outs.some((o) => !T.sameType(o[i].dataType, first[i].dataType)))
  if (!needsWidening) return undefined
  const targets = first.map((_, i) =>
    findWiderCommonType(
      outs.map((o) => o[i].dataType),
      r.conf.caseSensitive
    )
  )
  if (targets.some((t) => t === undefined)) {
    outs.slice(1).forEach((o, ti) => {
      o.forEach((a, ci) => {
        if (findWiderTypeForTwo(a.dataType, first[ci].dataType, r.conf.caseSensitive) === undefined) {
          failClass(
            "DataTypeMismatch",
            "INCOMPATIBLE_COLUMN_TYPE",
            `${operator} can only be performed on tables with compatible column types. The ${ordinalNumber(ci)} column of the ${ordinalNumber(ti + 1)} table is ${toSQLType(a.dataType)} type which is not compatible with ${toSQLType(first[ci].dataType)} at the same column of the first table..`
          )
        }
      })
    })
    // Every pair widens but not all together: report the first column that does not
    const ci = targets.indexOf(undefined)
    return failClass(
      "DataTypeMismatch",
      "INCOMPATIBLE_COLUMN_TYPE",
      `${operator} can only be performed on tables with compatible column types. The ${ordinalNumber(ci)} column of the second table is ${toSQLType(outs[1][ci].dataType)} type which is not compatible with ${toSQLType(first[ci].dataType)} at the same column of the first table..`
    )
  }
  return children.map((c, ci): P.LogicalPlan => {
    const list = output(c).map((a, i): E.Expression => {
      const t = targets[i] as T.DataType
      return equalsType(a.dataType, t)
        ? a
        : { _tag: "Alias", child: implicitCast(a, t), name: a.name, exprId: stableExprId(p, `widen:${ci}:${i}`) }
    })
    return { _tag: "Project", planId: stablePlanId(p, `widen:${ci}`), projectList: list, child: c }
  })
}

/** Spark's `ResolveUnion` for `unionByName`: every child reordered to the first child's names. */
const unionByName = (r: Resolver, children: ReadonlyArray<P.LogicalPlan>, p: P.Union): Array<P.LogicalPlan> => {
  const first = output(children[0])
  // With allowMissingColumns the result has the first child's columns, then new ones in order of appearance
  const names: Array<{ name: string; dataType: T.DataType }> = first.map((a) => ({
    name: a.name,
    dataType: a.dataType
  }))
  if (p.allowMissingColumns) {
    for (const c of children.slice(1)) {
      for (const a of output(c)) {
        if (!names.some((n) => r.eq(n.name, a.name))) names.push({ name: a.name, dataType: a.dataType })
      }
    }
  }
  return children.map((c, ci): P.LogicalPlan => {
    const out = output(c)
    const list: Array<E.Expression> = names.map((n, i) => {
      const found = out.find((a) => r.eq(a.name, n.name))
      if (found !== undefined) return found
      if (!p.allowMissingColumns) {
        return failClass(
          "UnresolvedColumn",
          "_LEGACY_ERROR_TEMP_1201",
          `Cannot resolve column name "${n.name}" among (${out.map((a) => a.name).join(", ")}).`
        )
      }
      return {
        _tag: "Alias",
        child: E.literal(null, n.dataType),
        name: n.name,
        exprId: stableExprId(p, `byname:${ci}:${i}`)
      }
    })
    if (!p.allowMissingColumns && out.length !== names.length) {
      failClass(
        "InvalidPlan",
        "NUM_COLUMNS_MISMATCH",
        `UNION can only be performed on inputs with the same number of columns, but the first input has ${names.length} columns and the ${ordinalNumber(ci)} input has ${out.length} columns.`
      )
    }
    const same = list.length === out.length && list.every((e, i) => e === out[i])
    return same ? c : { _tag: "Project", planId: stablePlanId(p, `byname:${ci}`), projectList: list, child: c }
  })
}
