/**
 * Spark's collection functions: building arrays, maps and structs (`array`, `map`, `struct`,
 * `named_struct`), reading them (`size`, `element_at`, `array_contains`, `array_position`,
 * `map_keys`, `map_values`), and reshaping arrays (`sort_array`, `array_sort`, `array_distinct`,
 * `array_union`, `array_intersect`, `array_except`, `array_remove`, `slice`, `flatten`,
 * `sequence`, `array_join`, `array_max`, `array_min`, `array_repeat`).
 *
 * Elements compare as Spark's ordering does: NaN equals NaN and sorts above every other number.
 * `size(null)` is -1 (`spark.sql.legacy.sizeOfNull` is true and ANSI mode is off).
 *
 * @since 0.1.0
 */
import { nullableOf } from "../Compile.ts"
import * as T from "../DataType.ts"
import type { Expression } from "../Expression.ts"
import * as O from "../Ordering.ts"
import {
  callName,
  commonTypeOf,
  dataDiffTypes,
  define,
  invalid,
  isFoldableLiteral,
  literalValue,
  unexpectedInputType,
  wrongNumArgs
} from "./Define.ts"
import { register, type Resolution, type ScalarFunctionDef } from "./Registry.ts"

const I = T.IntegerType

const isPrimitive = (t: T.DataType): boolean =>
  t._tag === "integer" ||
  t._tag === "long" ||
  t._tag === "double" ||
  t._tag === "string" ||
  t._tag === "boolean" ||
  t._tag === "timestamp" ||
  t._tag === "date" ||
  t._tag === "null"

/**
 * A key under which equal values of `t` collide: the value itself for primitives (a `Set` then
 * treats NaN as NaN and 0 as -0, Spark's normalization), a canonical string otherwise.
 */
const setKey = (t: T.DataType): ((v: unknown) => unknown) => (isPrimitive(t) ? (v) => v : O.keyString(t))

const elementType = (t: T.DataType): T.DataType => (t._tag === "array" ? t.elementType : T.NullType)

/** Spark's `findWiderTypeWithoutStringPromotionForTwo`: no common type through string. */
const widerWithoutStringPromotion = (a: T.DataType, b: T.DataType): T.DataType | undefined => {
  const c = T.commonType(a, b)
  if (c === undefined) return undefined
  if (
    c._tag === "string" &&
    !((a._tag === "string" || a._tag === "null") && (b._tag === "string" || b._tag === "null"))
  )
    return undefined
  return c
}

/** The name of a `struct(...)` field: an attribute's or alias's name, a struct field's name, else `col<n>`. */
const fieldName = (e: Expression, i: number): string => {
  switch (e._tag) {
    case "AttributeReference":
    case "Alias":
      return e.name
    case "GetField":
      return e.field
    case "UnresolvedAttribute":
      return e.nameParts[e.nameParts.length - 1]
    default:
      // Spark's `CreateStruct`: anything that is not a named expression, a cast included, is `col<n>`
      return `col${i + 1}`
  }
}

/** `array(a, b, …)`: the arguments' common type; `array()` is `array<void>`. */
const array: ScalarFunctionDef = {
  name: "array",
  resolve: (argTypes, args) => {
    const common = commonTypeOf(argTypes)
    if (common === undefined) return dataDiffTypes("array", args, argTypes)
    return {
      _tag: "Resolved",
      resultType: T.array(common, args.some(nullableOf)),
      nullable: false,
      castArgsTo: argTypes.map((t) => (T.sameType(t, common) ? undefined : common))
    }
  },
  compile: (args) => {
    const n = args.length
    return (row) => {
      const out = new Array<unknown>(n)
      for (let i = 0; i < n; i++) {
        const v = args[i](row)
        out[i] = v === undefined ? null : v
      }
      return out
    }
  }
}

/** `map(k1, v1, k2, v2, …)` (PySpark's `create_map`). Duplicate keys keep the last value (Spark's LAST_WIN policy; its default policy fails the query instead). */
const createMap: ScalarFunctionDef = {
  name: "map",
  resolve: (argTypes, args) => {
    if (argTypes.length % 2 !== 0) {
      return invalid(
        `[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The \`map\` requires 2n (n > 0) parameters but the actual number is ${argTypes.length}.`
      )
    }
    const keys = argTypes.filter((_, i) => i % 2 === 0)
    const values = argTypes.filter((_, i) => i % 2 === 1)
    const kt = commonTypeOf(keys)
    const vt = commonTypeOf(values)
    if (kt === undefined)
      return dataDiffTypes(
        "map",
        args.filter((_, i) => i % 2 === 0),
        keys
      )
    if (vt === undefined)
      return dataDiffTypes(
        "map",
        args.filter((_, i) => i % 2 === 1),
        values
      )
    if (kt._tag === "map")
      return invalid(
        `[DATATYPE_MISMATCH.INVALID_MAP_KEY_TYPE] Cannot resolve "${callName("map", args)}" due to data type mismatch: The key of map cannot be/contain "MAP".`
      )
    return {
      _tag: "Resolved",
      resultType: T.map(
        kt,
        vt,
        args.some((a, i) => i % 2 === 1 && nullableOf(a))
      ),
      nullable: false,
      castArgsTo: argTypes.map((t, i) => {
        const target = i % 2 === 0 ? kt : vt
        return T.sameType(t, target) ? undefined : target
      })
    }
  },
  compile: (args, argTypes) => {
    const n = args.length
    const key = argTypes.length > 0 ? setKey(argTypes[0]) : (v: unknown) => v
    const primitive = argTypes.length === 0 || isPrimitive(argTypes[0])
    return (row) => {
      const out = new Map<unknown, unknown>()
      const seen = primitive ? undefined : new Map<unknown, unknown>()
      for (let i = 0; i < n; i += 2) {
        const k = args[i](row)
        // Spark: a null map key is an error; without a way to fail here, the whole map is null
        if (k == null) return null
        const v = args[i + 1](row)
        if (seen !== undefined) {
          const sk = key(k)
          const prev = seen.get(sk)
          if (prev !== undefined) out.delete(prev)
          seen.set(sk, k)
        }
        out.set(k, v === undefined ? null : v)
      }
      return out
    }
  }
}

/** `struct(a, b, …)`: named after the arguments (attribute or alias names), `col<n>` otherwise. */
const struct: ScalarFunctionDef = {
  name: "struct",
  resolve: (argTypes, args) => ({
    _tag: "Resolved",
    resultType: T.struct(argTypes.map((t, i) => T.field(fieldName(args[i], i), t, nullableOf(args[i])))),
    nullable: false,
    castArgsTo: argTypes.map(() => undefined)
  }),
  compile: (args) => {
    const n = args.length
    return (row) => {
      const out = new Array<unknown>(n)
      for (let i = 0; i < n; i++) {
        const v = args[i](row)
        out[i] = v === undefined ? null : v
      }
      return out
    }
  }
}

/** `named_struct(name1, value1, …)`; names must be string literals. */
const namedStruct: ScalarFunctionDef = {
  name: "named_struct",
  resolve: (argTypes, args) => {
    if (argTypes.length % 2 !== 0 || argTypes.length === 0) {
      return wrongNumArgs("named_struct", "2n (n > 0)", argTypes.length)
    }
    const fields: Array<T.StructField> = []
    for (let i = 0; i < args.length; i += 2) {
      const lit = literalValue(args[i])
      if (lit === undefined || typeof lit.value !== "string") {
        return invalid(
          `[DATATYPE_MISMATCH.CREATE_NAMED_STRUCT_WITHOUT_FOLDABLE_STRING] Cannot resolve "${callName("named_struct", args)}" due to data type mismatch: Only foldable \`STRING\` expressions are allowed to appear at odd position.`
        )
      }
      fields.push(T.field(lit.value, argTypes[i + 1], nullableOf(args[i + 1])))
    }
    return {
      _tag: "Resolved",
      resultType: T.struct(fields),
      nullable: false,
      castArgsTo: argTypes.map(() => undefined)
    }
  },
  compile: (args) => {
    const values = args.filter((_, i) => i % 2 === 1)
    const n = values.length
    return (row) => {
      const out = new Array<unknown>(n)
      for (let i = 0; i < n; i++) {
        const v = values[i](row)
        out[i] = v === undefined ? null : v
      }
      return out
    }
  }
}

const sizeFunction = (name: string): ScalarFunctionDef =>
  define({
    name,
    inputs: [["array", "map"]],
    result: I,
    nullable: "never",
    compile: (args) => {
      const a = args[0]
      return (row) => {
        const v = a(row)
        if (v == null) return -1
        return v instanceof Map ? v.size : (v as ReadonlyArray<unknown>).length
      }
    }
  })

/** Inputs `[array<common>, common]` for functions of an array and one value. */
const arrayAndElement =
  (name: string) =>
  (argTypes: ReadonlyArray<T.DataType>, args: ReadonlyArray<Expression>): ReadonlyArray<T.DataType> | Resolution => {
    const at = argTypes[0]
    if (at._tag !== "array" && at._tag !== "null") return unexpectedInputType(name, args, 0, "array", at)
    const et = elementType(at)
    const common = widerWithoutStringPromotion(et, argTypes[1])
    if (common === undefined) {
      return invalid(
        `[DATATYPE_MISMATCH.ARRAY_FUNCTION_DIFF_TYPES] Cannot resolve "${callName(name, args)}" due to data type mismatch: Input to \`${name}\` should have been "ARRAY" followed by a value with same element type, but it's ["${T.simpleString(at).toUpperCase()}", "${T.simpleString(argTypes[1]).toUpperCase()}"].`
      )
    }
    return [T.array(common, at._tag === "array" ? at.containsNull : true), common]
  }

/** Inputs `[array<common>, array<common>]` for functions of two arrays. */
const twoArrays =
  (name: string) =>
  (argTypes: ReadonlyArray<T.DataType>, args: ReadonlyArray<Expression>): ReadonlyArray<T.DataType> | Resolution => {
    for (let i = 0; i < 2; i++) {
      const t = argTypes[i]
      if (t._tag !== "array" && t._tag !== "null") return unexpectedInputType(name, args, i, "array", t)
    }
    const common = T.commonType(elementType(argTypes[0]), elementType(argTypes[1]))
    if (common === undefined) return dataDiffTypes(name, args, argTypes)
    const containsNull = argTypes.some((t) => t._tag !== "array" || t.containsNull)
    return [T.array(common, containsNull), T.array(common, containsNull)]
  }

const sortArray =
  (ascending: boolean, nullsFirst: boolean, cmp: O.Comparator): ((a: ReadonlyArray<unknown>) => Array<unknown>) =>
  (a) => {
    const nulls: Array<unknown> = []
    const values: Array<unknown> = []
    for (const x of a) (x == null ? nulls : values).push(x === undefined ? null : x)
    values.sort(ascending ? cmp : (x, y) => cmp(y, x))
    return nullsFirst ? [...nulls, ...values] : [...values, ...nulls]
  }

const distinct = (a: ReadonlyArray<unknown>, key: (v: unknown) => unknown): Array<unknown> => {
  const seen = new Set<unknown>()
  const out: Array<unknown> = []
  let sawNull = false
  for (const x of a) {
    if (x == null) {
      if (!sawNull) out.push(null)
      sawNull = true
      continue
    }
    const k = key(x)
    if (seen.has(k)) continue
    seen.add(k)
    out.push(x)
  }
  return out
}

const arrayExtremum = (name: string, max: boolean): ScalarFunctionDef =>
  define({
    name,
    inputs: ["array"],
    result: (types) => elementType(types[0]),
    nullable: "always",
    strict: (info) => {
      const cmp = O.comparator(elementType(info.argTypes[0]))
      return (a: ReadonlyArray<unknown>) => {
        let best: unknown = null
        for (const x of a) {
          if (x == null) continue
          if (best === null) best = x
          else {
            const c = cmp(x, best)
            if (max ? c > 0 : c < 0) best = x
          }
        }
        return best
      }
    }
  })

/** `sort_array(arr, asc)`: the order must be a literal, as Spark requires. */
const sortArrayDef: ScalarFunctionDef = (() => {
  const def = define({
    name: "sort_array",
    inputs: ["array", T.BooleanType],
    minArgs: 1,
    result: (types) => types[0],
    strict: (info) => {
      const cmp = O.comparator(elementType(info.argTypes[0]))
      const asc = literalValue(info.argExprs[1])?.value !== false
      // Spark: nulls first when ascending, last when descending
      const sort = sortArray(asc, asc, cmp)
      return (a: ReadonlyArray<unknown>) => sort(a)
    }
  })
  return {
    ...def,
    resolve: (argTypes, args) => {
      if (args.length === 2 && !isFoldableLiteral(args[1])) {
        return invalid(
          `[DATATYPE_MISMATCH.NON_FOLDABLE_INPUT] Cannot resolve "${callName("sort_array", args)}" due to data type mismatch: the input \`ascendingOrder\` should be a foldable "BOOLEAN" expression.`
        )
      }
      return def.resolve(argTypes, args)
    }
  }
})()

register(
  array,
  createMap,
  struct,
  namedStruct,
  sizeFunction("size"),
  sizeFunction("cardinality"),
  define({
    name: "array_size",
    inputs: ["array"],
    result: I,
    strict: () => (a: ReadonlyArray<unknown>) => a.length
  }),
  define({
    name: "array_contains",
    inputs: arrayAndElement("array_contains"),
    minArgs: 2,
    maxArgs: 2,
    result: T.BooleanType,
    nullable: "always",
    strict: (info) => {
      const eq = O.equality(elementType(info.argTypes[0]))
      return (a: ReadonlyArray<unknown>, v: unknown) => {
        let sawNull = false
        for (const x of a) {
          if (x == null) sawNull = true
          else if (eq(x, v)) return true
        }
        return sawNull ? null : false
      }
    }
  }),
  define({
    name: "array_position",
    inputs: arrayAndElement("array_position"),
    minArgs: 2,
    maxArgs: 2,
    result: T.LongType,
    strict: (info) => {
      const eq = O.equality(elementType(info.argTypes[0]))
      return (a: ReadonlyArray<unknown>, v: unknown) => {
        for (let i = 0; i < a.length; i++) if (a[i] != null && eq(a[i], v)) return i + 1
        return 0
      }
    }
  }),
  define({
    name: "array_remove",
    inputs: arrayAndElement("array_remove"),
    minArgs: 2,
    maxArgs: 2,
    result: (types) => types[0],
    strict: (info) => {
      const eq = O.equality(elementType(info.argTypes[0]))
      return (a: ReadonlyArray<unknown>, v: unknown) => a.filter((x) => x == null || !eq(x, v))
    }
  }),
  define({
    name: "element_at",
    inputs: (argTypes, args) => {
      const t = argTypes[0]
      if (t._tag === "array") return ["array", I]
      if (t._tag === "map") return ["map", t.keyType]
      return unexpectedInputType("element_at", args, 0, ["array", "map"], t)
    },
    minArgs: 2,
    maxArgs: 2,
    result: (types) => {
      const t = types[0]
      return t._tag === "array" ? t.elementType : t._tag === "map" ? t.valueType : T.NullType
    },
    nullable: "always",
    strict: (info) => {
      if (info.argTypes[0]._tag === "map") {
        const kt = (info.argTypes[0] as T.MapType).keyType
        if (isPrimitive(kt)) {
          return (m: Map<unknown, unknown>, k: unknown) => {
            const v = m.get(k)
            return v === undefined ? null : v
          }
        }
        const eq = O.equality(kt)
        return (m: Map<unknown, unknown>, k: unknown) => {
          for (const [mk, mv] of m) if (eq(mk, k)) return mv
          return null
        }
      }
      // Spark: 1-based, negative counts from the end; out of range is null without ANSI.
      // Index 0 is an error in Spark (INVALID_INDEX_OF_ZERO); here it gives null.
      return (a: ReadonlyArray<unknown>, i: number) => {
        if (i === 0) return null
        const j = i > 0 ? i - 1 : a.length + i
        if (j < 0 || j >= a.length) return null
        const v = a[j]
        return v === undefined ? null : v
      }
    }
  }),
  sortArrayDef,
  define({
    name: "array_sort",
    inputs: ["array"],
    result: (types) => types[0],
    strict: (info) => {
      // array_sort: ascending with nulls last
      const sort = sortArray(true, false, O.comparator(elementType(info.argTypes[0])))
      return (a: ReadonlyArray<unknown>) => sort(a)
    }
  }),
  define({
    name: "array_distinct",
    inputs: ["array"],
    result: (types) => types[0],
    strict: (info) => {
      const key = setKey(elementType(info.argTypes[0]))
      return (a: ReadonlyArray<unknown>) => distinct(a, key)
    }
  }),
  define({
    name: "array_union",
    inputs: twoArrays("array_union"),
    minArgs: 2,
    maxArgs: 2,
    result: (types) => types[0],
    strict: (info) => {
      const key = setKey(elementType(info.argTypes[0]))
      return (a: ReadonlyArray<unknown>, b: ReadonlyArray<unknown>) => distinct([...a, ...b], key)
    }
  }),
  define({
    name: "array_intersect",
    inputs: twoArrays("array_intersect"),
    minArgs: 2,
    maxArgs: 2,
    result: (types) => types[0],
    strict: (info) => {
      const key = setKey(elementType(info.argTypes[0]))
      return (a: ReadonlyArray<unknown>, b: ReadonlyArray<unknown>) => {
        const inB = new Set<unknown>()
        let bNull = false
        for (const x of b) {
          if (x == null) bNull = true
          else inB.add(key(x))
        }
        return distinct(a, key).filter((x) => (x == null ? bNull : inB.has(key(x))))
      }
    }
  }),
  define({
    name: "array_except",
    inputs: twoArrays("array_except"),
    minArgs: 2,
    maxArgs: 2,
    result: (types) => types[0],
    strict: (info) => {
      const key = setKey(elementType(info.argTypes[0]))
      return (a: ReadonlyArray<unknown>, b: ReadonlyArray<unknown>) => {
        const inB = new Set<unknown>()
        let bNull = false
        for (const x of b) {
          if (x == null) bNull = true
          else inB.add(key(x))
        }
        return distinct(a, key).filter((x) => (x == null ? !bNull : !inB.has(key(x))))
      }
    }
  }),
  define({
    name: "arrays_overlap",
    inputs: twoArrays("arrays_overlap"),
    minArgs: 2,
    maxArgs: 2,
    result: T.BooleanType,
    nullable: "always",
    strict: (info) => {
      const key = setKey(elementType(info.argTypes[0]))
      return (a: ReadonlyArray<unknown>, b: ReadonlyArray<unknown>) => {
        const inA = new Set<unknown>()
        let sawNull = false
        for (const x of a) {
          if (x == null) sawNull = true
          else inA.add(key(x))
        }
        for (const x of b) {
          if (x == null) sawNull = true
          else if (inA.has(key(x))) return true
        }
        // Spark: no common element but a null on either side (and both non-empty) is null
        return sawNull && a.length > 0 && b.length > 0 ? null : false
      }
    }
  }),
  arrayExtremum("array_max", true),
  arrayExtremum("array_min", false),
  define({
    name: "array_join",
    inputs: [T.array(T.StringType), T.StringType, T.StringType],
    minArgs: 2,
    result: T.StringType,
    strict: (info) =>
      info.argTypes.length === 2
        ? (a: ReadonlyArray<string | null>, sep: string) => a.filter((x) => x != null).join(sep)
        : (a: ReadonlyArray<string | null>, sep: string, rep: string) => a.map((x) => (x == null ? rep : x)).join(sep)
  }),
  define({
    name: "slice",
    inputs: ["array", I, I],
    result: (types) => types[0],
    nullable: "always",
    strict: () => (a: ReadonlyArray<unknown>, start: number, length: number) => {
      // Spark fails on start = 0 or a negative length; here those give null
      if (start === 0 || length < 0) return null
      const from = start > 0 ? start - 1 : a.length + start
      if (from < 0 || from >= a.length) return []
      return a.slice(from, Math.min(a.length, from + length))
    }
  }),
  define({
    name: "flatten",
    inputs: (argTypes, args) => {
      const t = argTypes[0]
      if (t._tag !== "array" || t.elementType._tag !== "array") {
        return unexpectedInputType("flatten", args, 0, T.array(T.array(T.NullType)), t)
      }
      return ["array"]
    },
    minArgs: 1,
    maxArgs: 1,
    result: (types) => (types[0] as T.ArrayType).elementType,
    nullable: "always",
    strict: () => (a: ReadonlyArray<ReadonlyArray<unknown> | null>) => {
      const out: Array<unknown> = []
      for (const inner of a) {
        if (inner == null) return null
        for (const x of inner) out.push(x)
      }
      return out
    }
  }),
  define({
    name: "sequence",
    inputs: (argTypes, args) => {
      const common = commonTypeOf(argTypes)
      if (common === undefined || !(T.isIntegral(common) || common._tag === "null")) {
        return invalid(
          `[DATATYPE_MISMATCH.SEQUENCE_WRONG_INPUT_TYPES] Cannot resolve "${callName("sequence", args)}" due to data type mismatch: \`sequence\` uses the wrong parameter type. The parameter type must conform to: the start and stop expressions must resolve to the same integral type (dates and timestamps with interval steps are not supported here).`
        )
      }
      const t = common._tag === "null" ? I : common
      return argTypes.map(() => t)
    },
    minArgs: 2,
    maxArgs: 3,
    result: (types) => T.array(types[0], false),
    nullable: "always",
    strict: (info) =>
      info.argTypes.length === 2
        ? (start: number, stop: number) => sequence(start, stop, start <= stop ? 1 : -1)
        : (start: number, stop: number, step: number) => sequence(start, stop, step)
  }),
  define({
    name: "array_repeat",
    inputs: ["any", I],
    result: (types, args) => T.array(types[0], nullableOf(args[0])),
    compile: (args) => {
      const [e, n] = args
      return (row) => {
        const count = n(row)
        if (count == null) return null
        const v = e(row)
        return new Array<unknown>(Math.max(0, count as number)).fill(v === undefined ? null : v)
      }
    }
  }),
  define({
    name: "map_keys",
    inputs: ["map"],
    result: (types) => T.array((types[0] as T.MapType).keyType, false),
    strict: () => (m: Map<unknown, unknown>) => [...m.keys()]
  }),
  define({
    name: "map_values",
    inputs: ["map"],
    result: (types) => {
      const t = types[0] as T.MapType
      return T.array(t.valueType, t.valueContainsNull)
    },
    strict: () => (m: Map<unknown, unknown>) => [...m.values()]
  }),
  define({
    name: "map_entries",
    inputs: ["map"],
    result: (types) => {
      const t = types[0] as T.MapType
      return T.array(
        T.struct([T.field("key", t.keyType, false), T.field("value", t.valueType, t.valueContainsNull)]),
        false
      )
    },
    strict: () => (m: Map<unknown, unknown>) => [...m.entries()].map(([k, v]) => [k, v])
  }),
  define({
    name: "map_from_arrays",
    inputs: ["array", "array"],
    result: (types) => {
      const k = types[0] as T.ArrayType
      const v = types[1] as T.ArrayType
      return T.map(k.elementType, v.elementType, v.containsNull)
    },
    nullable: "always",
    strict: () => (keys: ReadonlyArray<unknown>, values: ReadonlyArray<unknown>) => {
      // Spark fails when the lengths differ or a key is null; here those give null
      if (keys.length !== values.length) return null
      const out = new Map<unknown, unknown>()
      for (let i = 0; i < keys.length; i++) {
        if (keys[i] == null) return null
        out.set(keys[i], values[i] ?? null)
      }
      return out
    }
  }),
  define({
    name: "map_contains_key",
    inputs: (argTypes, args) => {
      const t = argTypes[0]
      if (t._tag !== "map") return unexpectedInputType("map_contains_key", args, 0, "map", t)
      return ["map", t.keyType]
    },
    minArgs: 2,
    maxArgs: 2,
    result: T.BooleanType,
    strict: () => (m: Map<unknown, unknown>, k: unknown) => m.has(k)
  })
)

/** Spark's `sequence` over integral values; null for a step that never reaches `stop` (Spark fails). */
const sequence = (start: number, stop: number, step: number): Array<number> | null => {
  if (step === 0 ? start !== stop : (stop - start) / step < 0) return null
  const out: Array<number> = []
  if (step === 0) return [start]
  if (step > 0) for (let v = start; v <= stop; v += step) out.push(v)
  else for (let v = start; v >= stop; v += step) out.push(v)
  return out
}

/**
 * Spark's `ArraysZip`: an array of structs whose i-th struct holds the i-th element of every
 * argument (null where an array is shorter); null when any argument is null. A field is named
 * after its argument when that is a column or an alias, and by its position (`"0"`, `"1"`, …)
 * otherwise.
 */
const arraysZip: ScalarFunctionDef = {
  name: "arrays_zip",
  resolve: (argTypes, args) => {
    for (let i = 0; i < argTypes.length; i++) {
      const t = argTypes[i]
      if (t._tag !== "array" && t._tag !== "null") return unexpectedInputType("arrays_zip", args, i, "array", t)
    }
    const fields = argTypes.map((t, i) => {
      const a = args[i]
      const name = a._tag === "AttributeReference" || a._tag === "Alias" ? a.name : String(i)
      return T.field(name, t._tag === "array" ? t.elementType : T.NullType, true)
    })
    return {
      _tag: "Resolved",
      resultType: T.array(T.struct(fields), false),
      nullable: args.some(nullableOf),
      castArgsTo: args.map(() => undefined)
    }
  },
  compile: (args) => {
    const n = args.length
    return (row) => {
      const arrays = new Array<ReadonlyArray<unknown>>(n)
      let len = 0
      for (let i = 0; i < n; i++) {
        const a = args[i](row) as ReadonlyArray<unknown> | null | undefined
        if (a === null || a === undefined) return null
        arrays[i] = a
        if (a.length > len) len = a.length
      }
      const out = new Array<unknown>(len)
      for (let j = 0; j < len; j++) {
        const s = new Array<unknown>(n)
        for (let i = 0; i < n; i++) {
          const v = arrays[i][j]
          s[i] = v === undefined ? null : v
        }
        out[j] = s
      }
      return out
    }
  }
}

register(arraysZip)
