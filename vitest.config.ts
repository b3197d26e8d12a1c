import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const source = (file: string): string => fileURLToPath(new URL(file, import.meta.url))

export default defineConfig({
  // Tests may import the library by its package name (the published one, and the entry points'
  // names in API.md), resolved to this checkout's sources.
  resolve: {
    alias: [
      { find: /^tributary(?:-streaming)?\/dstream$/, replacement: source("./dstream/mod.ts") },
      { find: /^tributary(?:-streaming)?\/testing$/, replacement: source("./structured/testing.ts") },
      { find: /^tributary(?:-streaming)?$/, replacement: source("./mod.ts") }
    ]
  },
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/deno/**", "node_modules/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Start the test Kafka broker, the Spark Connect server and the local Kinesis for runs that
    // include their tests.
    globalSetup: ["./test/kafka/globalSetup.ts", "./test/connect/globalSetup.ts", "./test/kinesis/globalSetup.ts"],
    pool: "forks",
    typecheck: {
      enabled: true,
      include: ["test/**/*.tst.ts"],
      tsconfig: "./tsconfig.json"
    }
  }
})
