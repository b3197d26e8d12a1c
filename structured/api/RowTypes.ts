/**
 * Type-level row algebra for the typed DataFrame API: which column names a row type has, and
 * the row types that `select`, `withColumn`, `groupBy/agg` and `join` produce.
 *
 * A DataFrame whose row type is not known precisely (a file read with an inferred schema,
 * `spark.sql`) is `DataFrame<Row>`, where every name type-checks and values are `unknown`.
 *
 * @since 0.1.0
 */
import type { Column } from "../../core/Column.ts"

/** An untyped row. */
export type Row = Record<string, unknown>

/** Flattens an intersection for readable hover types. */
export type Simplify<A> = { [K in keyof A]: A[K] } & {}

type UnionToIntersection<U> = (U extends unknown ? (k: U) => void : never) extends (k: infer I) => void ? I : never

/** The column names of `R`. */
export type ColumnName<R> = Extract<keyof R, string>

/** A name that may refer to a column of `R`: a column, a struct field path (`window.start`) or `*`. */
export type ColumnPath<R> = string extends keyof R ? string : ColumnName<R> | `${ColumnName<R>}.${string}` | "*"

/** A column of `R` by name, or any `Column`. */
export type ColumnRef<R> = ColumnPath<R> | Column<any, any>

type FieldOf<V, P extends string> = P extends `${infer H}.${infer Rest}`
  ? V extends Record<H, infer X>
    ? FieldOf<X, Rest>
    : unknown
  : V extends Record<P, infer X>
    ? X
    : unknown

/** The row one select item contributes. */
export type ItemRow<R, C> = C extends "*"
  ? R
  : C extends Column<infer V, infer N>
    ? string extends N
      ? Row
      : N extends keyof R
        ? unknown extends V
          ? { [K in N]: R[N] }
          : { [K in N]: V }
        : { [K in N]: V }
    : C extends keyof R
      ? { [K in C]: R[C] }
      : C extends `${infer H}.${infer Rest}`
        ? H extends keyof R
          ? { [K in LastSegment<Rest>]: FieldOf<R[H], Rest> }
          : Row
        : C extends string
          ? string extends keyof R
            ? { [K in C]: unknown }
            : Row
          : Row

type LastSegment<P extends string> = P extends `${string}.${infer Rest}` ? LastSegment<Rest> : P

/** The row type of `select(...items)`. */
export type SelectRow<R, Cs extends ReadonlyArray<unknown>> = Simplify<
  UnionToIntersection<{ [I in keyof Cs]: ItemRow<R, Cs[I]> }[number]>
>

/** `withColumn(name, col)`: replaces or appends one column. */
export type WithColumnRow<R, N extends string, V> = Simplify<Omit<R, N> & { [K in N]: V }>

/** `withColumnRenamed(from, to)`. */
export type RenamedRow<R, From extends string, To extends string> = From extends keyof R
  ? Simplify<Omit<R, From> & { [K in To]: R[From] }>
  : R

/** The value type of a Column. */
export type ValueOf<C> = C extends Column<infer V, any> ? V : unknown

/** Each field of `R` made nullable (the padded side of an outer join). */
export type Nullable<R> = { [K in keyof R]: R[K] | null }

/** The row of a join with `how` and USING keys `K` (never for a condition join). */
export type JoinRow<L, Rt, How extends string, K extends string> = How extends
  | "left_semi"
  | "leftsemi"
  | "semi"
  | "left_anti"
  | "leftanti"
  | "anti"
  ? L
  : How extends "left" | "left_outer" | "leftouter"
    ? Simplify<Pick<L, Extract<K, keyof L>> & Omit<L, K> & Nullable<Omit<Rt, K>>>
    : How extends "right" | "right_outer" | "rightouter"
      ? Simplify<Pick<Rt, Extract<K, keyof Rt>> & Nullable<Omit<L, K>> & Omit<Rt, K>>
      : How extends "full" | "full_outer" | "fullouter" | "outer"
        ? Simplify<Nullable<Pick<L, Extract<K, keyof L>>> & Nullable<Omit<L, K>> & Nullable<Omit<Rt, K>>>
        : Simplify<Pick<L, Extract<K, keyof L>> & Omit<L, K> & Omit<Rt, K>>

/** Join types Spark accepts (case-insensitive in Spark; here the spellings are typed). */
export type JoinHow =
  | "inner"
  | "cross"
  | "outer"
  | "full"
  | "fullouter"
  | "full_outer"
  | "left"
  | "leftouter"
  | "left_outer"
  | "right"
  | "rightouter"
  | "right_outer"
  | "semi"
  | "leftsemi"
  | "left_semi"
  | "anti"
  | "leftanti"
  | "left_anti"
