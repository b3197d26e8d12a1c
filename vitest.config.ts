import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/deno/**", "node_modules/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Starts the test Kafka broker for runs that include a Kafka test (test/kafka/globalSetup.ts).
    globalSetup: ["./test/kafka/globalSetup.ts"],
    pool: "forks",
    typecheck: {
      enabled: true,
      include: ["test/**/*.tst.ts"],
      tsconfig: "./tsconfig.json"
    }
  }
})
