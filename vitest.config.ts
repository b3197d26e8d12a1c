import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/deno/**", "node_modules/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    typecheck: {
      enabled: true,
      include: ["test/**/*.tst.ts"],
      tsconfig: "./tsconfig.json"
    }
  }
})
