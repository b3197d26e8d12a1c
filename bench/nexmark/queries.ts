/**
 * The Nexmark queries of this folder, in Flink's order.
 */
import type { NexmarkQuery } from "./Nexmark.ts"
import { q0 } from "./q0.ts"
import { q1 } from "./q1.ts"
import { q2 } from "./q2.ts"
import { q3 } from "./q3.ts"
import { q4 } from "./q4.ts"
import { q5 } from "./q5.ts"
import { q7 } from "./q7.ts"
import { q8 } from "./q8.ts"
import { q11 } from "./q11.ts"
import { q12 } from "./q12.ts"

export const QUERIES: ReadonlyArray<NexmarkQuery> = [q0, q1, q2, q3, q4, q5, q7, q8, q11, q12]
