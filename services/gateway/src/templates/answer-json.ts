/** The JSON object in a model's answer: the whole text, inside a code fence, or between its outer braces. */
export function jsonFromAnswer(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)```/.exec(text)?.[1];
  const candidates = [text.trim(), fenced?.trim(), outerBraces(text)].filter((candidate): candidate is string => Boolean(candidate));
  for (const candidate of candidates) {
    try {
      const value: unknown = JSON.parse(candidate);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) return { ok: true, value };
    } catch {
      // the next candidate
    }
  }
  return { ok: false, message: text.trim() ? 'the model did not answer a JSON object' : 'the model answered nothing' };
}

function outerBraces(text: string): string | undefined {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  return start >= 0 && end > start ? text.slice(start, end + 1) : undefined;
}
