import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/deno/**", "node_modules/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Start the test Kafka broker and the Spark Connect server for runs that include their tests.
    globalSetup: ["./test/kafka/globalSetup.ts", "./test/connect/globalSetup.ts"],
    pool: "forks",
    typecheck: {
      enabled: true,
      include: ["test/**/*.tst.ts"],
      tsconfig: "./tsconfig.json"
    }
  }
})
