/**
 * The arguments of a run_command command line: words split on spaces and tabs, where a single-
 * or double-quoted part keeps its spaces (`node -e "console.log(1)"`). Nothing is expanded: no
 * variables, globs or escapes, because no shell ever sees the line.
 */
export function commandArguments(line: string): { ok: true; argv: string[] } | { ok: false; message: string } {
  const argv: string[] = [];
  let word: string | null = null;
  let quote: '"' | "'" | null = null;
  for (const char of line) {
    if (quote) {
      if (char === quote) quote = null;
      else word += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      word ??= '';
    } else if (char === ' ' || char === '\t') {
      if (word !== null) argv.push(word);
      word = null;
    } else {
      word = (word ?? '') + char;
    }
  }
  if (quote) return { ok: false, message: `unterminated ${quote} quote` };
  if (word !== null) argv.push(word);
  if (argv.length === 0) return { ok: false, message: 'empty' };
  return { ok: true, argv };
}
