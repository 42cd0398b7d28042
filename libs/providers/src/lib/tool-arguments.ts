import { isJsonObject, type JsonObject, type JsonValue } from '@packetagent/contracts';
import type { ToolCall } from './provider.types';

function kindOf(value: JsonValue): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/**
 * Reads a tool call's argument text. A model can emit anything there; what is not a JSON object
 * becomes `arguments: null` with the reason, so the caller can send one correction turn instead
 * of executing a call it cannot read.
 */
export function parseToolArguments(raw: string): Pick<ToolCall, 'arguments' | 'malformed'> {
  // Some providers send an empty string for a tool that takes no arguments.
  if (raw.trim() === '') return { arguments: {} };
  let parsed: JsonValue;
  try {
    parsed = JSON.parse(raw) as JsonValue;
  } catch (error) {
    return { arguments: null, malformed: `arguments are not valid JSON (${error instanceof Error ? error.message : 'parse error'})` };
  }
  if (!isJsonObject(parsed)) return { arguments: null, malformed: `arguments must be a JSON object, got ${kindOf(parsed)}` };
  return { arguments: parsed };
}

/** A tool call from argument text as the model wrote it. */
export function toolCallFromText(id: string, name: string, rawArguments: string): ToolCall {
  const parsed = parseToolArguments(rawArguments);
  return parsed.malformed === undefined
    ? { id, name, arguments: parsed.arguments, rawArguments }
    : { id, name, arguments: null, rawArguments, malformed: parsed.malformed };
}

/**
 * A tool call from a provider that sends arguments already decoded (Anthropic, Gemini, Ollama):
 * an object is taken as is, a string is read as argument text, anything else is malformed.
 */
export function toolCallFromValue(id: string, name: string, value: unknown): ToolCall {
  if (value === undefined || value === null) return { id, name, arguments: {}, rawArguments: '{}' };
  if (typeof value === 'string') return toolCallFromText(id, name, value);
  const rawArguments = JSON.stringify(value);
  if (isJsonObject(value)) return { id, name, arguments: value as JsonObject, rawArguments };
  return { id, name, arguments: null, rawArguments, malformed: `arguments must be a JSON object, got ${kindOf(value as JsonValue)}` };
}

/** The arguments to send back for a call in a rebuilt transcript: providers require an object. */
export function argumentsForReplay(call: ToolCall): JsonObject {
  return call.arguments ?? {};
}
