import type { Issue } from './errors';

/**
 * The YAML parser's message ends with "at line L, column C:" and an excerpt of the source over
 * several lines; the CLI names the line and column itself, so only the sentence before is kept.
 */
export function yamlSentence(message: string): string {
  const sentence = message.split('\n')[0]!.replace(/\s+at line \d+, column \d+:?\s*$/, '');
  return sentence.trim() || message.trim();
}

/**
 * A problem's detail often repeats its issues after a summary ("invalid definition: a: x; b: y"),
 * and the CLI prints every issue on a line of its own: the summary alone stays.
 */
export function detailWithoutIssues(detail: string, issues: readonly Issue[]): string {
  const first = issues[0];
  if (!first) return detail;
  const at = detail.indexOf(`: ${first.path || '(root)'}: `);
  return at > 0 ? detail.slice(0, at) : detail;
}
