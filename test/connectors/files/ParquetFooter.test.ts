/**
 * The synchronous Parquet footer reader gives the schema `ParquetFormat` gets through DuckDB.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { parquetFooterSchema } from "../../../connectors/files/ParquetFooter.ts"
import { ParquetFormat } from "../../../connectors/files/ParquetFormat.ts"
import * as DuckDB from "../../../state/DuckDB.ts"
import { tempDir } from "./streamHelpers.ts"

describe("parquetFooterSchema", () => {
  it.effect("types every column as ParquetFormat does through DuckDB", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const file = path.join(dir, "all.parquet")
      yield* DuckDB.withMemory((c) =>
        c.execute(
          `COPY (SELECT 1::TINYINT AS t, 2::SMALLINT AS s, 3::INTEGER AS i, 4::BIGINT AS b, 5::UINTEGER AS ui,
             6::USMALLINT AS us, 1.5::FLOAT AS f, 2.5::DOUBLE AS d, 'x' AS v, 'ab'::BLOB AS bl, true AS bo,
             DATE '2020-01-02' AS dt, TIMESTAMP '2020-01-02 03:04:05' AS ts,
             TIMESTAMPTZ '2020-01-02 03:04:05+00' AS tz, 1.25::DECIMAL(10,2) AS dec, 12345678901234.5::DECIMAL(20,1) AS dec2,
             [1, 2]::INTEGER[] AS arr, [['a']]::VARCHAR[][] AS arr2, {'a': 1, 'b': 'z'} AS st,
             MAP {'k': 1.5} AS m, [{'x': 1}] AS arrst, uuid() AS u) TO ? (FORMAT parquet)`,
          [file]
        )
      ).pipe(Effect.orDie)
      const viaDuckDB = yield* ParquetFormat.resolveSchema([file], undefined, {})
      assert.deepStrictEqual(parquetFooterSchema(file), viaDuckDB)
    })
  )

  it.effect("says why a file is not Parquet", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const file = path.join(dir, "x.parquet")
      fs.writeFileSync(file, "not a parquet file at all")
      assert.strictEqual(parquetFooterSchema(file), `${file} is not a Parquet file (no PAR1 footer)`)
    })
  )
})
