#!/usr/bin/env node
/**
 * The installed `tributary-streaming` command. It checks the Node.js version before it loads
 * anything (effect 4 and the engine need Node.js 22.19 or later; an older Node would fail inside
 * a dependency, or print nothing), then runs the CLI of `bin/tributary.ts`.
 *
 * Written to parse and run on any Node.js with ES modules: no static imports.
 *
 * @since 0.1.0
 */
const REQUIRED = { major: 22, minor: 19 }

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number)
if (major < REQUIRED.major || (major === REQUIRED.major && minor < REQUIRED.minor)) {
  process.stderr.write(
    `tributary-streaming needs Node.js ${REQUIRED.major}.${REQUIRED.minor} or later; this is Node.js ${process.versions.node}.\n`
  )
  process.exit(1)
}

const cli = await import("./tributary.ts")
await cli.runMain(process.argv.slice(2))
