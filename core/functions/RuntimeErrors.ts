/**
 * Errors an expression raises while it runs (Spark's `SparkRuntimeException`s from
 * `QueryExecutionErrors`): thrown from inside an operator's loop as a typed `ConnectorError`
 * with Spark's error class, SQLSTATE and message, so the action or the batch fails with it
 * (`execute` turns the throw into a failure; see structured/physical/Execute.ts), not a defect.
 *
 * @since 0.6.0
 */
import { ConnectorError } from "../Errors.ts"

/**
 * The typed failure of an expression at run time: `[CLASS] text SQLSTATE: state`, as Spark's
 * `SparkThrowable.getMessage` words it.
 *
 * @since 0.6.0
 */
export const expressionError = (errorClass: string, sqlState: string, text: string, cause?: unknown): ConnectorError =>
  new ConnectorError({
    connector: "expression",
    domain: "user",
    retryable: false,
    errorClass,
    sqlState,
    message: `[${errorClass}] ${text} SQLSTATE: ${sqlState}`,
    ...(cause === undefined ? {} : { cause })
  })
