/** What the person typed, read before it is sent: a definition's content type, a run's JSON input. Pure. */

/** JSON is YAML too, but sent as JSON its errors name JSON paths without YAML line numbers. */
export function definitionContentType(text: string): 'application/json' | 'application/yaml' {
  return text.trimStart().startsWith('{') ? 'application/json' : 'application/yaml';
}

/** The run input as typed: a JSON value, or why it is not one. */
export function parseRunInput(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  if (!text.trim()) return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, message: `The run input is not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}
