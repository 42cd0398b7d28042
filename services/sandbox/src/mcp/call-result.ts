import { MCP_INLINE_RESULT_BYTES, McpErrorCodes, parsePayload, payloadContent, type JsonValue, type McpCallResult } from '@packetagent/contracts';
import type { PayloadStore } from '@packetagent/eventstore';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { outputText } from '../exec/output-capture';
import { McpCallError } from './mcp-call-error';

/** The result's content as text for the model and the timeline: text parts as they are, other parts named. */
export function previewOf(result: CallToolResult, previewBytes: number): string {
  const parts = result.content.map((part) => {
    switch (part.type) {
      case 'text':
        return part.text;
      case 'image':
      case 'audio':
        return `[${part.type} ${part.mimeType}, ${part.data.length} base64 characters]`;
      case 'resource_link':
        return `[resource ${part.uri}]`;
      case 'resource':
        return 'text' in part.resource && typeof part.resource.text === 'string' ? part.resource.text : `[resource ${part.resource.uri}]`;
      default:
        return '[content]';
    }
  });
  const text = parts.join('\n');
  const bytes = Buffer.from(text, 'utf8');
  // Cut on a byte boundary; a broken last character reads as U+FFFD.
  return bytes.length <= previewBytes ? outputText(bytes) : outputText(bytes.subarray(0, previewBytes));
}

/**
 * The call's answer with the whole result: inline when its canonical form is at most
 * MCP_INLINE_RESULT_BYTES, else stored and answered by reference. A result whose canonical form
 * is over the server's maxResultBytes (or the payload store's limit) is refused, not cut.
 */
export async function answerWithResult(
  payloads: PayloadStore,
  workspaceId: string,
  server: { name: string; maxResultBytes: number },
  result: CallToolResult,
  startedAt: number,
  previewBytes: number,
): Promise<McpCallResult> {
  let content;
  try {
    content = payloadContent(result as unknown as JsonValue);
  } catch (error) {
    throw new McpCallError(McpErrorCodes.protocol, `${server.name} answered with a result that is not plain JSON: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const limit = Math.min(server.maxResultBytes, payloads.maxBytes);
  if (content.size > limit) {
    throw new McpCallError(McpErrorCodes.resultTooLarge, `${server.name} answered with a result of ${content.size} bytes, above the limit of ${limit} bytes${limit < server.maxResultBytes ? ' (the payload store\'s)' : ''}`);
  }
  // A small result costs more to store than to carry: the answer holds it, and no reference can dangle.
  const inline = content.size <= MCP_INLINE_RESULT_BYTES;
  const ref = inline ? null : await payloads.put(workspaceId, content);
  const preview = previewOf(result, previewBytes);
  const failed = result.isError === true;
  return {
    ok: !failed,
    preview,
    result: ref,
    ...(inline ? { value: parsePayload(content.bytes) } : {}),
    bytes: content.size,
    error: failed ? { code: McpErrorCodes.toolError, message: preview || `${server.name} flagged the result as an error without text` } : null,
    durationMs: Math.max(0, Math.round(performance.now() - startedAt)),
  };
}
