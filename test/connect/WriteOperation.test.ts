/**
 * `df.write` on a remote session becomes Spark Connect's `WriteOperation` command, as pyspark's
 * Connect `DataFrameWriter` builds it (checked end to end by WriteInterop.test.ts).
 */
import { create } from "@bufbuild/protobuf"
import { describe, expect, it } from "vitest"
import { WriteOperation_SaveMode } from "../../connect/gen/spark/connect/commands_pb.ts"
import { RelationSchema } from "../../connect/gen/spark/connect/relations_pb.ts"
import { writeOperationCommand } from "../../connect/RemoteSession.ts"

const relation = create(RelationSchema, { relType: { case: "sql", value: { query: "SELECT 1 AS a" } } })

describe("writeOperationCommand", () => {
  it("carries the format, path, mode, options and partitioning", () => {
    const command = writeOperationCommand(relation, {
      format: "avro",
      mode: "overwrite",
      path: "/data/out",
      options: { compression: "snappy" },
      partitionColumns: ["day"]
    })
    expect(command.commandType.case).toBe("writeOperation")
    const op = command.commandType.value as import("../../connect/gen/spark/connect/commands_pb.ts").WriteOperation
    expect(op.input).toBe(relation)
    expect(op.source).toBe("avro")
    expect(op.saveType).toEqual({ case: "path", value: "/data/out" })
    expect(op.mode).toBe(WriteOperation_SaveMode.OVERWRITE)
    expect(op.options).toEqual({ compression: "snappy" })
    expect(op.partitioningColumns).toEqual(["day"])
  })
  it("maps every mode and leaves the path and format out when they are not given", () => {
    const modes = (["append", "overwrite", "error", "ignore"] as const).map(
      (mode) =>
        (writeOperationCommand(relation, { format: undefined, mode, path: undefined, options: {}, partitionColumns: [] })
          .commandType.value as { mode: number }).mode
    )
    expect(modes).toEqual([
      WriteOperation_SaveMode.APPEND,
      WriteOperation_SaveMode.OVERWRITE,
      WriteOperation_SaveMode.ERROR_IF_EXISTS,
      WriteOperation_SaveMode.IGNORE
    ])
    const op = writeOperationCommand(relation, { format: undefined, mode: "error", path: undefined, options: {}, partitionColumns: [] })
      .commandType.value as { saveType: { case: unknown }; source?: string }
    expect(op.saveType.case).toBeUndefined()
    expect(op.source).toBeUndefined()
  })
})
