/**
 * `examples/tour.ipynb` executed headless on Deno's Jupyter kernel by plain `jupyter nbconvert
 * --execute` (Debian's `jupyter-nbconvert`), five times, and its outputs checked: every run has
 * every output and no empty one (a cell's value, which Deno's kernel may send after the cell has
 * finished, would be dropped at random — the notebook uses `spark.display(...)`), no cell errored,
 * the DataFrame cells render an HTML `<table>` next to `show()`'s text, the query cell shows the
 * live card (last updated in place to "stopped"), and the state cell shows the open windows' rows.
 * The first executed notebook is kept as `test-output/tour.executed.ipynb`.
 *
 * The kernel is registered by hand in a temporary JUPYTER_PATH (what `deno jupyter --install`
 * writes, with the project's Deno binary), so nothing is installed for the user. Deno is started
 * in the notebook's folder and finds the repository's deno.json (`nodeModulesDir: manual`) and
 * its node_modules by walking up from there, as `deno run` does.
 *
 * Needs jupyter nbconvert, which `npm test` installs first (`scripts/test-setup.sh`); without it the test fails saying so.
 */
import { execFile } from "node:child_process"
import { mkdirSync, realpathSync } from "node:fs"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { denoPath, jupyterPath, OUTPUT_DIR, ROOT } from "./tools.ts"

interface Output {
  readonly output_type: string
  readonly name?: string
  readonly text?: string | ReadonlyArray<string>
  readonly data?: Record<string, string | ReadonlyArray<string>>
  readonly ename?: string
  readonly evalue?: string
  readonly traceback?: ReadonlyArray<string>
}
interface Cell {
  readonly cell_type: string
  readonly source: string | ReadonlyArray<string>
  readonly outputs?: ReadonlyArray<Output>
}

const text = (s: string | ReadonlyArray<string> | undefined): string => (s === undefined ? "" : typeof s === "string" ? s : s.join(""))

/** The rows of the first HTML table in `html`, as arrays of cell texts (the header row excluded). */
const tableRows = (html: string): Array<Array<string>> => {
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? ""
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => [...m[1]!.matchAll(/<td>([\s\S]*?)<\/td>/g)].map((c) => c[1]!))
}

/** How many times the notebook is executed: outputs lost at random show up across runs. */
const RUNS = 5

const run = (file: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, timeout: number) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(file, args, { env, timeout, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr })
    )
  })

describe("examples/tour.ipynb on Deno's Jupyter kernel", () => {
  let work: string | undefined
  let cells: ReadonlyArray<Cell> = []
  const runs: Array<ReadonlyArray<Cell>> = []

  beforeAll(async () => {
    const jupyter = jupyterPath()
    const deno = realpathSync(denoPath())
    work = await mkdtemp(join(tmpdir(), "tributary-notebook-"))
    const kernelDir = join(work, "jupyter", "kernels", "deno")
    mkdirSync(kernelDir, { recursive: true })
    await writeFile(
      join(kernelDir, "kernel.json"),
      JSON.stringify({
        argv: [deno, "jupyter", "--kernel", "--conn", "{connection_file}"],
        display_name: "Deno",
        language: "typescript"
      })
    )
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      JUPYTER_PATH: join(work, "jupyter"),
      // Keep Jupyter's runtime files (connection files) and config out of the user's home.
      JUPYTER_RUNTIME_DIR: join(work, "runtime"),
      JUPYTER_CONFIG_DIR: join(work, "config"),
      JUPYTER_DATA_DIR: join(work, "data"),
      NO_COLOR: "1",
      DENO_NO_UPDATE_CHECK: "1"
    }
    for (let i = 0; i < RUNS; i++) {
      const output = join(work, `tour.executed.${i}.ipynb`)
      // Plain `jupyter nbconvert --execute`, exactly as docs/tools.md tells a user to run it.
      const result = await run(
        jupyter,
        [
          "nbconvert",
          "--to",
          "notebook",
          "--execute",
          "--ExecutePreprocessor.kernel_name=deno",
          "--ExecutePreprocessor.timeout=120",
          "--ExecutePreprocessor.startup_timeout=120",
          "--output",
          output,
          join(ROOT, "examples", "tour.ipynb")
        ],
        env,
        240_000
      )
      if (result.code !== 0) {
        throw new Error(`jupyter nbconvert --execute failed (run ${i + 1}, exit ${result.code}):\n${result.stderr.slice(-4000)}`)
      }
      const executed = await readFile(output, "utf8")
      if (i === 0) {
        mkdirSync(OUTPUT_DIR, { recursive: true })
        await writeFile(join(OUTPUT_DIR, "tour.executed.ipynb"), executed)
      }
      runs.push((JSON.parse(executed) as { cells: ReadonlyArray<Cell> }).cells.filter((c) => c.cell_type === "code"))
    }
    cells = runs[0]!
  }, 300_000 * RUNS)

  afterAll(async () => {
    if (work !== undefined) await rm(work, { recursive: true, force: true })
  })

  /** The code cell whose source contains `marker` (or is exactly `marker`, with `exact`). */
  const cell = (marker: string, exact = false): Cell => {
    const found = cells.find((c) => (exact ? text(c.source).trim() === marker : text(c.source).includes(marker)))
    if (found === undefined) throw new Error(`no code cell contains ${marker}`)
    return found
  }
  /** The rich outputs (execute_result and display_data) of a cell. */
  const rich = (c: Cell) => (c.outputs ?? []).filter((o) => o.output_type === "execute_result" || o.output_type === "display_data")

  it("ran every cell without an error", () => {
    expect(cells.length).toBe(9)
    for (const c of cells) {
      const errors = (c.outputs ?? []).filter((o) => o.output_type === "error" || (o.output_type === "stream" && o.name === "stderr"))
      expect(errors, text(c.source)).toEqual([])
    }
  })

  it(`gives every output in each of ${RUNS} runs, and no empty one`, () => {
    expect(runs.length).toBe(RUNS)
    const shape = (cs: ReadonlyArray<Cell>) =>
      cs.map((c) =>
        (c.outputs ?? []).map((o) =>
          o.output_type === "stream" ? `stream:${o.name}` : `${o.output_type}:${Object.keys(o.data ?? {}).sort().join(",")}`
        )
      )
    const expected = [
      [],
      ["display_data:text/html,text/plain"],
      [],
      ["display_data:text/html,text/plain"],
      ["display_data:text/plain"],
      ["display_data:text/html,text/plain"],
      [],
      ["display_data:text/html,text/plain"],
      []
    ]
    for (const [i, r] of runs.entries()) {
      const got = shape(r)
      expect(got, `run ${i + 1}`).toEqual(expected)
    }
  })

  it("renders a DataFrame as an HTML table next to show()'s text", () => {
    const [out, ...more] = rich(cell(`sensors.groupBy("room")`))
    expect(more).toEqual([])
    const html = text(out?.data?.["text/html"])
    expect(html).toContain("<table>")
    expect(html).toContain("DataFrame[room: string, sensors: bigint, mean: double]")
    expect(tableRows(html)).toEqual([
      ["hall", "1", "18.25"],
      ["kitchen", "2", "21.75"]
    ])
    expect(text(out?.data?.["text/plain"])).toContain("|kitchen|      2|21.75|")
  })

  it("shows the query as a card, updated in place until it stopped", () => {
    const outs = rich(cell("await spark.display(query)", true))
    const cards = outs.filter((o) => text(o.data?.["text/html"]).includes("StreamingQuery"))
    // One card (a display with an id, updated in place), not one per refresh.
    expect(cards.length).toBe(1)
    const html = text(cards[0]!.data!["text/html"])
    expect(html).toContain("StreamingQuery windows")
    for (const field of ["status", "batch", "input rate", "processing rate", "batch duration", "watermark", "state rows"]) {
      expect(html).toContain(`<th>${field}</th>`)
    }
    // It was first shown before any batch ran ("batch –"); its last update came after the next
    // cell stopped the query.
    expect(html).toContain("<tr><th>status</th><td>stopped</td></tr>")
    expect(html).toMatch(/<tr><th>batch<\/th><td>\d+<\/td><\/tr>/)
    expect(html).toMatch(/<tr><th>watermark<\/th><td>1970-01-01T00:00:\d\d\.000Z<\/td><\/tr>/)
    expect(html).toMatch(/<tr><th>state rows<\/th><td>[1-9]\d*<\/td><\/tr>/)
    const stopped = rich(cell("await spark.run(query.stop())")).map((o) => text(o.data?.["text/plain"])).join("")
    expect(stopped).toMatch(/^stopped after batch \d+, watermark 1970-01-01T00:00:\d\d\.000Z$/)
  })

  it("shows the windows the watermark closed", () => {
    const html = text(rich(cell(`spark.table("windows")`))[0]?.data?.["text/html"])
    expect(html).toContain("<table>")
    expect(tableRows(html).slice(0, 2)).toEqual([
      ["1970-01-01 00:00:00", "1970-01-01 00:00:05", "0", "50", "2450"],
      ["1970-01-01 00:00:00", "1970-01-01 00:00:05", "1", "50", "2500"]
    ])
  })

  it("reads the open windows from the state store", () => {
    const html = text(rich(cell(`F.col("key.window.start")`))[0]?.data?.["text/html"])
    expect(html).toContain("<table>")
    const rows = tableRows(html)
    expect(rows.length).toBeGreaterThanOrEqual(2)
    for (const [start, bucket, events, total] of rows) {
      expect(start).toMatch(/^1970-01-01 00:00:\d\d$/)
      expect(["0", "1"]).toContain(bucket)
      expect(Number(events)).toBeGreaterThan(0)
      expect(Number(total)).toBeGreaterThan(0)
    }
  })
})
