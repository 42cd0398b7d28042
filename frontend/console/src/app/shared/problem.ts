/** One validation issue of a problem+json answer: where in the input, and what is wrong. */
export interface ProblemIssue {
  path: string;
  message: string;
}

/** What the console knows about a failed API call, whatever its body was. */
export interface Problem {
  status: number;
  title: string;
  detail: string;
  code: string | null;
  errors: ProblemIssue[];
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.length > 0 ? value : null;
}

/**
 * Reads an error answer. The API answers problem+json; a proxy in front of it may answer HTML
 * or nothing, so every field falls back to something a person can act on.
 */
export function toProblem(status: number, body: unknown, statusText = ''): Problem {
  const record = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const errors = Array.isArray(record['errors'])
    ? record['errors'].flatMap((issue: unknown) => {
        if (typeof issue !== 'object' || issue === null) return [];
        const { path, message } = issue as Record<string, unknown>;
        return typeof message === 'string' ? [{ path: typeof path === 'string' ? path : '', message }] : [];
      })
    : [];
  return {
    status,
    title: text(record['title']) ?? (text(statusText) ?? (status === 0 ? 'The server could not be reached' : `HTTP ${status}`)),
    detail: text(record['detail']) ?? (status === 0 ? 'Check the connection and try again.' : ''),
    code: text(record['code']),
    errors,
  };
}

/** Issues grouped by path, so a form can show each next to its field ('' holds the document-level ones). */
export function issuesByPath(errors: readonly ProblemIssue[]): Map<string, string[]> {
  const grouped = new Map<string, string[]>();
  for (const issue of errors) grouped.set(issue.path, [...(grouped.get(issue.path) ?? []), issue.message]);
  return grouped;
}

/** A sentence for an error state. A 404 from a read route names the route, since it may not exist on this server yet. */
export function describeProblem(problem: Problem, route?: string): string {
  if (problem.status === 404 && route && problem.code !== null && problem.code !== 'not_found') return `${problem.title}. ${problem.detail}`.trim();
  if (problem.status === 404 && route) return `This server does not answer ${route} (404). ${problem.detail}`.trim();
  return [problem.title, problem.detail].filter(Boolean).join('. ');
}
