/** Exit codes are the CLI's contract with scripts: they branch on them, never on the wording. */
export const ExitCode = {
  ok: 0,
  /** The API refused the request, or the command line or a file is wrong. */
  failure: 1,
  /** Nothing answered at the API URL (refused, unresolvable, timed out). */
  connection: 2,
  /** 401 or 403: the key is missing, wrong, expired, revoked or lacks the permission. */
  auth: 3,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export interface Issue {
  path: string;
  message: string;
}

/** A failure the CLI reports as `error: <message>`, each issue on a line of its own, and an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCodeValue,
    readonly issues: readonly Issue[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class UsageError extends CliError {
  constructor(message: string) {
    super(message, ExitCode.failure);
  }
}

export class ConnectionError extends CliError {
  constructor(
    readonly url: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`cannot reach the PacketAgent API at ${url}: ${reason}`, ExitCode.connection, [], options);
  }
}

/** A non-2xx answer; the message and issues come from its problem+json body when it has one. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    message: string,
    issues: readonly Issue[],
    /** The problem+json body, for a command that acts on a particular refusal; null when there was none. */
    readonly problem: Readonly<Record<string, unknown>> | null = null,
  ) {
    super(message, status === 401 || status === 403 ? ExitCode.auth : ExitCode.failure, issues);
  }

  /** The problem's stable `code`, e.g. `host_key_unpinned`. */
  get code(): string | null {
    const code = this.problem?.['code'];
    return typeof code === 'string' ? code : null;
  }
}

export function renderError(error: CliError): string {
  const lines = [`error: ${error.message}`, ...error.issues.map((issue) => `  ${issue.path || '(root)'}: ${issue.message}`)];
  return `${lines.join('\n')}\n`;
}
