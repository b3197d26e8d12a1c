/**
 * Inside this checkout the library resolves by its package name (vitest's aliases and
 * tsconfig's paths): the published name `tributary-streaming` and the entry points' names in the
 * API contract (`tributary`, `tributary/dstream`, `tributary/testing`) give the same modules as
 * the relative imports.
 */
import { describe, expect, it } from "vitest"
import * as Dstream from "../../dstream/mod.ts"
import * as Root from "../../mod.ts"
import * as Testing from "../../structured/testing.ts"
import * as ContractDstream from "tributary/dstream"
import * as ContractRoot from "tributary"
import * as ContractTesting from "tributary/testing"
import * as NamedDstream from "tributary-streaming/dstream"
import * as NamedRoot from "tributary-streaming"
import * as NamedTesting from "tributary-streaming/testing"

describe("the package's names in this checkout", () => {
  it("resolve to the sources", () => {
    expect(NamedRoot.Session).toBe(Root.Session)
    expect(ContractRoot.Session).toBe(Root.Session)
    expect(NamedDstream.StreamingContext).toBe(Dstream.StreamingContext)
    expect(ContractDstream.StreamingContext).toBe(Dstream.StreamingContext)
    expect(NamedTesting.testStream).toBe(Testing.testStream)
    expect(ContractTesting.testStream).toBe(Testing.testStream)
  })
})
