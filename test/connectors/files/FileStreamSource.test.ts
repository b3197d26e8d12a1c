/**
 * The streaming file source (Spark's `FileStreamSource`, `FileStreamSourceSuite`): file order,
 * each option, malformed records in each mode, the seen-files log and replay after a restart.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Session } from "../../../mod.ts"
import { parseFileStreamOptions } from "../../../connectors/files/FileStreamOptions.ts"
import type { AnalysisError } from "../../../core/Errors.ts"
import * as DuckDB from "../../../state/DuckDB.ts"
import { CheckNewAnswer, Execute, StartStream, StopStream, testStream } from "../../../structured/testing.ts"
import { type Batches, put, readText, startRecording, tempDir } from "./streamHelpers.ts"

const ids = (batches: Batches) => batches.map(([id, rows]) => [id, rows.map((r) => r.id)] as const)

describe("FileStreamSource", () => {
  it.effect("reads new files oldest first (then by path), each once", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const chk = yield* tempDir()
      yield* put(dir, "b.json", '{"id":2}\n', 20)
      yield* put(dir, "a.json", '{"id":1}\n', 30)
      yield* put(dir, "c.json", '{"id":3}\n', 20)
      const batches: Batches = []
      const q = yield* startRecording(
        spark.readStream.schema("id INT").option("maxFilesPerTrigger", 1).json(dir),
        chk,
        batches
      )
      yield* q.processAllAvailable()
      assert.deepStrictEqual(ids(batches), [
        [0, [2]],
        [1, [3]],
        [2, [1]]
      ])
      yield* put(dir, "d.json", '{"id":4}\n{"id":5}\n', 10)
      yield* q.processAllAvailable()
      // a new file is new even when its timestamp is older than the files already read
      assert.deepStrictEqual(ids(batches).slice(3), [[3, [4, 5]]])
      yield* q.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("file names with spaces, percent signs and glob characters are read literally", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const chk = yield* tempDir()
      yield* put(dir, "a b%[1]{x}.json", '{"id":1}\n', 10)
      yield* put(dir, "a b%1x.json", '{"id":2}\n', 20)
      const batches: Batches = []
      const q = yield* startRecording(spark.readStream.schema("id INT").json(dir), chk, batches)
      yield* q.processAllAvailable()
      yield* q.stop()
      // within a batch, rows come in the batch read's file order (by path), as Spark gives no order
      assert.deepStrictEqual(ids(batches), [[0, [2, 1]]])
      assert.include(readText(path.join(chk, "sources", "0", "0")), `"path":"file:${dir}/a%20b%25%5B1%5D%7Bx%7D.json"`)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect('writes Spark\'s seen-files log and {"logOffset":n} offsets, compacted every compactInterval batches', () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* spark.conf.set("spark.sql.streaming.fileSource.log.compactInterval", "2")
      const dir = yield* tempDir()
      const chk = yield* tempDir()
      yield* put(dir, "a.json", '{"id":1}\n', 10)
      yield* put(dir, "b.json", '{"id":2}\n', 20)
      yield* put(dir, "c.json", '{"id":3}\n', 30)
      const q = yield* startRecording(
        spark.readStream.schema("id INT").option("maxFilesPerTrigger", 1).json(dir),
        chk,
        []
      )
      yield* q.processAllAvailable()
      yield* q.stop()
      const log = path.join(chk, "sources", "0")
      assert.deepStrictEqual(fs.readdirSync(log).filter((n) => !n.endsWith(".crc")).sort(), ["0", "1.compact", "2"])
      const url = (name: string) => `file:${path.join(dir, name)}`
      assert.strictEqual(readText(path.join(log, "0")), `v1\n{"path":"${url("a.json")}","timestamp":10000,"batchId":0}`)
      assert.strictEqual(
        readText(path.join(log, "1.compact")),
        `v1\n{"path":"${url("a.json")}","timestamp":10000,"batchId":0}\n{"path":"${url("b.json")}","timestamp":20000,"batchId":1}`
      )
      const offsets = readText(path.join(chk, "offsets", "2")).split("\n")
      assert.strictEqual(offsets[offsets.length - 1], '{"logOffset":2}')
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("maxBytesPerTrigger takes files up to the limit, at least one", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const chk = yield* tempDir()
      yield* put(dir, "a.json", '{"id":1}\n', 10) // 9 bytes
      yield* put(dir, "b.json", '{"id":2}\n', 20)
      yield* put(dir, "c.json", '{"id":30000}\n', 30) // 13 bytes
      yield* put(dir, "d.json", '{"id":4}\n', 40)
      const batches: Batches = []
      const q = yield* startRecording(
        spark.readStream.schema("id INT").option("maxBytesPerTrigger", 10).json(dir),
        chk,
        batches
      )
      yield* q.processAllAvailable()
      assert.deepStrictEqual(ids(batches), [
        [0, [1]],
        [1, [2]],
        [2, [30000]],
        [3, [4]]
      ])
      yield* q.stop()
      const batches2: Batches = []
      const chk2 = yield* tempDir()
      const q2 = yield* startRecording(
        spark.readStream.schema("id INT").option("maxBytesPerTrigger", 18).json(dir),
        chk2,
        batches2
      )
      yield* q2.processAllAvailable()
      assert.deepStrictEqual(ids(batches2), [
        [0, [1, 2]],
        [1, [30000]],
        [2, [4]]
      ])
      yield* q2.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("maxCachedFiles: files listed but not taken are read before the folder is listed again", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      for (const [cached, expected] of [
        [
          "10000",
          [
            [0, [1]],
            [1, [2]],
            [2, [3]],
            [3, [0]]
          ]
        ],
        [
          "0",
          [
            [0, [1]],
            [1, [0]],
            [2, [2]],
            [3, [3]]
          ]
        ]
      ] as const) {
        const dir = yield* tempDir()
        yield* put(dir, "a.json", '{"id":1}\n', 10)
        yield* put(dir, "b.json", '{"id":2}\n', 20)
        yield* put(dir, "c.json", '{"id":3}\n', 30)
        const batches: Batches = []
        const df = spark.readStream
          .schema("id INT")
          .option("maxFilesPerTrigger", 1)
          .option("maxCachedFiles", cached)
          .json(dir)
        const q = yield* df.writeStream
          .option("checkpointLocation", yield* tempDir())
          .foreachBatch((batch, id) =>
            Effect.gen(function* () {
              batches.push([id, (yield* batch.collect()) as ReadonlyArray<Record<string, unknown>>])
              // a file older than the rest arrives while batch 0 runs
              if (id === 0) yield* put(dir, "0.json", '{"id":0}\n', 5)
            })
          )
          .start()
        yield* q.processAllAvailable()
        yield* q.stop()
        assert.deepStrictEqual(ids(batches), expected as unknown)
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("latestFirst reads the newest files first", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const chk = yield* tempDir()
      yield* put(dir, "a.json", '{"id":1}\n', 10)
      yield* put(dir, "b.json", '{"id":2}\n', 20)
      yield* put(dir, "c.json", '{"id":3}\n', 30)
      const batches: Batches = []
      const q = yield* startRecording(
        spark.readStream.schema("id INT").option("latestFirst", "true").option("maxFilesPerTrigger", 1).json(dir),
        chk,
        batches
      )
      yield* q.processAllAvailable()
      assert.deepStrictEqual(ids(batches), [
        [0, [3]],
        [1, [2]],
        [2, [1]]
      ])
      yield* q.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("maxFileAge: a file older than the newest seen file by more than the age is ignored", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const chk = yield* tempDir()
      yield* put(dir, "new.json", '{"id":1}\n', 100_000)
      const batches: Batches = []
      const q = yield* startRecording(
        spark.readStream.schema("id INT").option("maxFileAge", "1h").json(dir),
        chk,
        batches
      )
      yield* q.processAllAvailable()
      yield* put(dir, "old.json", '{"id":2}\n', 100_000 - 3601)
      yield* put(dir, "recent.json", '{"id":3}\n', 100_000 - 3599)
      yield* q.processAllAvailable()
      assert.deepStrictEqual(ids(batches), [
        [0, [1]],
        [1, [3]]
      ])
      yield* q.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("fileNameOnly: a file is known by its name", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      for (const [fileNameOnly, expected] of [
        ["true", [[0, [1]]]],
        [
          "false",
          [
            [0, [1]],
            [1, [2]]
          ]
        ]
      ] as const) {
        const dir = yield* tempDir()
        const chk = yield* tempDir()
        yield* put(dir, "a/x.json", '{"id":1}\n', 10)
        const batches: Batches = []
        const q = yield* startRecording(
          spark.readStream.schema("id INT").option("fileNameOnly", fileNameOnly).json(path.join(dir, "*")),
          chk,
          batches
        )
        yield* q.processAllAvailable()
        yield* put(dir, "b/x.json", '{"id":2}\n', 20)
        yield* q.processAllAvailable()
        assert.deepStrictEqual(ids(batches), expected as unknown)
        yield* q.stop()
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("pathGlobFilter and recursiveFileLookup", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      yield* put(dir, "a.json", '{"id":1}\n', 10)
      yield* put(dir, "b.txt", '{"id":2}\n', 20)
      yield* put(dir, "sub/c.json", '{"id":3}\n', 30)
      const filtered: Batches = []
      const q1 = yield* startRecording(
        spark.readStream.schema("id INT").option("pathGlobFilter", "*.json").json(dir),
        yield* tempDir(),
        filtered
      )
      yield* q1.processAllAvailable()
      yield* q1.stop()
      assert.deepStrictEqual(ids(filtered), [[0, [1]]])
      const recursive: Batches = []
      const q2 = yield* startRecording(
        spark.readStream
          .schema("id INT")
          .option("recursiveFileLookup", "true")
          .option("pathGlobFilter", "*.json")
          .json(dir),
        yield* tempDir(),
        recursive
      )
      yield* q2.processAllAvailable()
      yield* q2.stop()
      assert.deepStrictEqual(ids(recursive), [[0, [1, 3]]])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("partition columns from key=value folders", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      yield* put(dir, "k=1/a.json", '{"id":1}\n', 10)
      yield* put(dir, "k=2/b.json", '{"id":2}\n', 20)
      const df = spark.readStream.schema("id INT").json(dir)
      assert.deepStrictEqual(df.columns, ["id", "k"])
      const batches: Batches = []
      const q = yield* startRecording(df, yield* tempDir(), batches)
      yield* q.processAllAvailable()
      yield* put(dir, "k=3/c.json", '{"id":3}\n', 30)
      yield* q.processAllAvailable()
      yield* q.stop()
      assert.deepStrictEqual(batches, [
        [
          0,
          [
            { id: 1, k: 1 },
            { id: 2, k: 2 }
          ]
        ],
        [1, [{ id: 3, k: 3 }]]
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("cleanSource delete and archive", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const a = yield* put(dir, "a.json", '{"id":1}\n', 10)
      const q = yield* startRecording(
        spark.readStream.schema("id INT").option("cleanSource", "delete").json(dir),
        yield* tempDir(),
        []
      )
      yield* q.processAllAvailable()
      // Spark cleans a batch's files when the next batch is planned (it commits the source's
      // offsets of batch N - 1 then), so a.json stays until batch 1 runs
      assert.isTrue(fs.existsSync(a))
      yield* put(dir, "b.json", '{"id":2}\n', 20)
      yield* q.processAllAvailable()
      assert.deepStrictEqual(fs.readdirSync(dir), ["b.json"])
      yield* q.stop()

      const src = path.join(yield* tempDir(), "in")
      const archive = yield* tempDir()
      const c = yield* put(src, "c.json", '{"id":3}\n', 30)
      const q2 = yield* startRecording(
        spark.readStream
          .schema("id INT")
          .option("cleanSource", "archive")
          .option("sourceArchiveDir", archive)
          .json(src),
        yield* tempDir(),
        []
      )
      yield* q2.processAllAvailable()
      assert.isTrue(fs.existsSync(c))
      yield* put(src, "d.json", '{"id":4}\n', 40)
      yield* q2.processAllAvailable()
      yield* q2.stop()
      assert.isFalse(fs.existsSync(c))
      // Spark moves a file to the archive folder followed by the file's own absolute path
      assert.strictEqual(readText(path.join(archive, c)), '{"id":3}\n')
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect(
    "malformed records: PERMISSIVE keeps the raw text, DROPMALFORMED drops, FAILFAST fails the query naming the file",
    () =>
      Effect.gen(function* () {
        const spark = yield* Session
        const dir = yield* tempDir()
        const bad = yield* put(dir, "a.json", '{"id":1}\n{"id":\n{"id":"x"}\n', 10)
        const permissive: Batches = []
        const q1 = yield* startRecording(
          spark.readStream.schema("id INT, _corrupt_record STRING").json(dir),
          yield* tempDir(),
          permissive
        )
        yield* q1.processAllAvailable()
        yield* q1.stop()
        assert.deepStrictEqual(permissive[0][1], [
          { id: 1, _corrupt_record: null },
          { id: null, _corrupt_record: '{"id":' },
          { id: null, _corrupt_record: '{"id":"x"}' }
        ])
        const csvDir = yield* tempDir()
        yield* put(csvDir, "a.csv", "1,a\nx,b\n", 10)
        const renamed: Batches = []
        const q1b = yield* startRecording(
          spark.readStream
            .schema("id INT, s STRING, bad STRING")
            .option("columnNameOfCorruptRecord", "bad")
            .csv(csvDir),
          yield* tempDir(),
          renamed
        )
        yield* q1b.processAllAvailable()
        yield* q1b.stop()
        assert.deepStrictEqual(renamed[0][1], [
          { id: 1, s: "a", bad: null },
          { id: null, s: "b", bad: "x,b" }
        ])

        const dropped: Batches = []
        const q2 = yield* startRecording(
          spark.readStream.schema("id INT").option("mode", "DROPMALFORMED").json(dir),
          yield* tempDir(),
          dropped
        )
        yield* q2.processAllAvailable()
        yield* q2.stop()
        assert.deepStrictEqual(dropped[0][1], [{ id: 1 }])

        const q3 = yield* startRecording(
          spark.readStream.schema("id INT").option("mode", "FAILFAST").json(dir),
          yield* tempDir(),
          []
        )
        const error = yield* Effect.flip(q3.processAllAvailable())
        assert.strictEqual(error._tag, "StreamingQueryError")
        assert.strictEqual(error.batchId, 0)
        assert.include(error.message, "[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION]")
        assert.include(error.message, `File file:${bad}.`)
        assert.isFalse(yield* q3.isActive())
      }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("invalid option values fail the query naming the option and the value", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const cases: ReadonlyArray<readonly [Record<string, string>, string]> = [
        [{ maxFilesPerTrigger: "0" }, "Invalid value '0' for option 'maxFilesPerTrigger', must be a positive integer"],
        [{ maxFilesPerTrigger: "x" }, "Invalid value 'x' for option 'maxFilesPerTrigger', must be a positive integer"],
        [
          { maxBytesPerTrigger: "-1" },
          "Invalid value '-1' for option 'maxBytesPerTrigger', must be a positive integer"
        ],
        [
          { maxFilesPerTrigger: "1", maxBytesPerTrigger: "1" },
          "Options 'maxFilesPerTrigger' and 'maxBytesPerTrigger' can't be both set at the same time"
        ],
        [{ latestFirst: "yes" }, "Invalid value 'yes' for option 'latestFirst', must be 'true' or 'false'"],
        [{ fileNameOnly: "1" }, "Invalid value '1' for option 'fileNameOnly', must be 'true' or 'false'"],
        [{ cleanSource: "move" }, "Invalid mode for clean source option Some(move). Must be one of ARCHIVE,DELETE,OFF"],
        [{ cleanSource: "archive" }, "Archive mode must be used with 'sourceArchiveDir' option."],
        [
          { maxFileAge: "1 week" },
          "Time must be specified as seconds (s), milliseconds (ms), microseconds (us), minutes (m or min), hour (h), or day (d). E.g. 50s, 100ms, or 250us.\nFailed to parse time string: 1 week"
        ],
        [{ modifiedBefore: "2020-01-01" }, "option 'modifiedBefore' is not allowed in file stream sources"],
        [
          { cleanSource: "archive", sourceArchiveDir: path.join(dir, "archive") },
          "requirement failed: Base archive path cannot be set to the path where archived path can possibly match with source pattern."
        ]
      ]
      for (const [options, message] of cases) {
        // Spark creates the source in the stream thread: start() succeeds, the query fails
        const q = yield* startRecording(spark.readStream.schema("id INT").options(options).json(dir), yield* tempDir(), [])
        const error = yield* Effect.flip(q.processAllAvailable().pipe(Effect.ensuring(q.stop())))
        assert.strictEqual(error._tag, "StreamingQueryError")
        assert.include(error.message, message)
      }
      assert.deepStrictEqual(parseFileStreamOptions({}), {
        maxFilesPerTrigger: undefined,
        maxBytesPerTrigger: undefined,
        maxFileAgeMs: 7 * 86_400_000,
        latestFirst: false,
        fileNameOnly: false,
        cleanSource: "OFF",
        sourceArchiveDir: undefined,
        maxCachedFiles: 10000,
        discardCachedInputRatio: 0.2
      })
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a schema is required unless spark.sql.streaming.schemaInference is on (text needs none)", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      yield* put(dir, "a.json", '{"id":1,"name":"a"}\n', 10)
      const error = yield* Effect.flip(startRecording(spark.readStream.json(dir), yield* tempDir(), []))
      assert.strictEqual(
        (error as AnalysisError).message,
        "Schema must be specified when creating a streaming source DataFrame. If some files already exist in the directory, then depending on the file format you may be able to create a static DataFrame on that directory with 'spark.read.load(directory)' and infer schema from it."
      )
      assert.deepStrictEqual(spark.readStream.text(dir).columns, ["value"])
      const missing = yield* Effect.flip(
        startRecording(spark.readStream.schema("id INT").json(path.join(dir, "nope")), yield* tempDir(), [])
      )
      assert.strictEqual(
        (missing as AnalysisError).message,
        `[PATH_NOT_FOUND] Path does not exist: file:${path.join(dir, "nope")}.`
      )
      yield* spark.conf.set("spark.sql.streaming.schemaInference", "true")
      const inferred = spark.readStream.json(dir)
      assert.deepStrictEqual(inferred.columns, ["id", "name"])
      const batches: Batches = []
      const q = yield* startRecording(inferred, yield* tempDir(), batches)
      yield* q.processAllAvailable()
      yield* q.stop()
      assert.deepStrictEqual(batches, [[0, [{ id: 1, name: "a" }]]])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a restart replays a logged but uncommitted batch with exactly the same files", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const chk = yield* tempDir()
      yield* put(dir, "a.json", '{"id":1}\n', 10)
      yield* put(dir, "b.json", '{"id":2}\n', 20)
      const df = spark.readStream.schema("id INT").option("maxFilesPerTrigger", 1).json(dir)
      const first: Batches = []
      const q = yield* startRecording(df, chk, first)
      yield* q.processAllAvailable()
      yield* q.stop()
      assert.deepStrictEqual(ids(first), [
        [0, [1]],
        [1, [2]]
      ])
      // as if the process died after the offset log of batch 1 but before its commit
      fs.rmSync(path.join(chk, "commits", "1"))
      yield* put(dir, "c.json", '{"id":3}\n', 5)
      const second: Batches = []
      const q2 = yield* startRecording(df, chk, second)
      yield* q2.processAllAvailable()
      yield* q2.stop()
      assert.deepStrictEqual(ids(second), [
        [1, [2]],
        [2, [3]]
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("testStream: StopStream and StartStream continue where the query stopped", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      let t = 10
      const add = (name: string, ...values: ReadonlyArray<number>) =>
        Execute(() => put(dir, name, values.map((v) => `{"id":${v}}\n`).join(""), t++))
      yield* testStream(spark.readStream.schema("id INT").json(dir), "append", [
        add("a.json", 1, 2),
        CheckNewAnswer({ id: 1 }, { id: 2 }),
        StopStream,
        add("b.json", 3),
        add("c.json", 4),
        StartStream(),
        CheckNewAnswer({ id: 3 }, { id: 4 }),
        StopStream,
        StartStream(),
        CheckNewAnswer(),
        add("d.json", 5),
        CheckNewAnswer({ id: 5 })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("csv, text and parquet sources", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      yield* put(dir, "csv/a.csv", "id,name\n1,x\n", 10)
      yield* put(dir, "text/a.txt", "hello\n\nworld\n", 10)
      const csv: Batches = []
      const q1 = yield* startRecording(
        spark.readStream.schema("id INT, name STRING").option("header", "true").csv(path.join(dir, "csv")),
        yield* tempDir(),
        csv
      )
      yield* q1.processAllAvailable()
      yield* q1.stop()
      assert.deepStrictEqual(csv, [[0, [{ id: 1, name: "x" }]]])
      const text: Batches = []
      const q2 = yield* startRecording(spark.readStream.text(path.join(dir, "text")), yield* tempDir(), text)
      yield* q2.processAllAvailable()
      yield* q2.stop()
      assert.deepStrictEqual(text, [[0, [{ value: "hello" }, { value: "" }, { value: "world" }]]])
      const pq = path.join(dir, "pq")
      fs.mkdirSync(pq)
      yield* DuckDB.withMemory((c) =>
        c.execute("COPY (SELECT 7::INTEGER AS id, 'p' AS name) TO ? (FORMAT parquet)", [path.join(pq, "a.parquet")])
      )
      const parquet: Batches = []
      const q3 = yield* startRecording(
        spark.readStream.schema("id INT, name STRING").parquet(pq),
        yield* tempDir(),
        parquet
      )
      yield* q3.processAllAvailable()
      yield* q3.stop()
      assert.deepStrictEqual(parquet, [[0, [{ id: 7, name: "p" }]]])
    }).pipe(Effect.provide(Session.layer()))
  )
})
