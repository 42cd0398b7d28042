import { DomainError, McpErrorCodes } from '@packetagent/contracts';
import { CheckedFetchError } from '@packetagent/tools';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export type McpErrorCode = (typeof McpErrorCodes)[keyof typeof McpErrorCodes];

/** Why an MCP call or list did not produce a result; `code` is one of McpErrorCodes. */
export class McpCallError extends DomainError {
  constructor(
    readonly code: McpErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

interface SchemaError extends Error {
  issues: Array<{ path: PropertyKey[]; message: string }>;
}

/** A zod error from whichever copy of zod the SDK was resolved with. */
function isSchemaError(error: unknown): error is SchemaError {
  return error instanceof Error && (error.name === 'ZodError' || error.name === '$ZodError') && Array.isArray((error as Partial<SchemaError>).issues);
}

function zodSummary(error: SchemaError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length ? issue.path.map(String).join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
}

/** Whether a transport error means the server sent something that is not MCP (bad JSON, wrong shape). */
export function isProtocolViolation(error: unknown): boolean {
  return isSchemaError(error) || error instanceof SyntaxError;
}

/** The error an SDK, transport or fetch failure stands for, with a message that names the server. */
export function toMcpCallError(error: unknown, server: string): McpCallError {
  if (error instanceof McpCallError) return error;
  if (isSchemaError(error)) return new McpCallError(McpErrorCodes.protocol, `${server} answered with the wrong shape: ${zodSummary(error)}`, { cause: error });
  if (error instanceof SyntaxError) return new McpCallError(McpErrorCodes.protocol, `${server} sent invalid JSON: ${error.message}`, { cause: error });
  if (error instanceof CheckedFetchError) {
    if (error.code === 'response_too_large') return new McpCallError(McpErrorCodes.resultTooLarge, `${server}: ${error.message}`, { cause: error });
    if (error.code === 'timeout') return new McpCallError(McpErrorCodes.timeout, `${server}: ${error.message}`, { cause: error });
    return new McpCallError(McpErrorCodes.unavailable, `${server} could not be reached (${error.code}): ${error.message}`, { cause: error });
  }
  if (error instanceof StreamableHTTPError) return new McpCallError(McpErrorCodes.unavailable, `${server}: ${error.message}`, { cause: error });
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) return new McpCallError(McpErrorCodes.timeout, `${server} did not answer in time: ${error.message}`, { cause: error });
    if (error.code === ErrorCode.ConnectionClosed) return new McpCallError(McpErrorCodes.unavailable, `${server} closed the connection: ${error.message}`, { cause: error });
    // A JSON-RPC error the server answered with, or a result that broke the tool's own output schema.
    return new McpCallError(McpErrorCodes.protocol, `${server} answered with an error: ${error.message}`, { cause: error });
  }
  return new McpCallError(McpErrorCodes.unavailable, `${server}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
}
