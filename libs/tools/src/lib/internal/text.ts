import { canonicalJson, sha256Hex, type JsonValue } from '@packetagent/contracts';

/** Characters of text (a body, a file, a diff) one outcome shows the model. */
export const MODEL_TEXT_LIMIT = 32 * 1024;

/** Characters of one bulky argument kept verbatim in redacted arguments. */
export const REDACTED_TEXT_LIMIT = 1024;

export function truncateText(text: string, limit = MODEL_TEXT_LIMIT): { text: string; truncated: boolean } {
  if (text.length <= limit) return { text, truncated: false };
  // Never cut a surrogate pair in half: a lone surrogate is not valid JSON text for jsonb.
  let end = limit;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return { text: text.slice(0, end), truncated: true };
}

/**
 * A bulky value as it may be recorded: kept when short, otherwise a preview with the length and
 * the SHA-256 of the whole, so two calls that differ only past the preview still digest apart.
 */
export function redactBulk(value: JsonValue, limit = REDACTED_TEXT_LIMIT): JsonValue {
  const text = typeof value === 'string' ? value : canonicalJson(value);
  if (text.length <= limit) return value;
  return { preview: truncateText(text, limit).text, chars: text.length, sha256: sha256Hex(text) };
}

/** One line for a summary: control characters flattened and length bounded. */
export function oneLine(text: string, limit = 200): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return flat.length <= limit ? flat : `${truncateText(flat, limit - 1).text}…`;
}
