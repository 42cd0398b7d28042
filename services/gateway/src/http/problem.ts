import { HttpException, HttpStatus } from '@nestjs/common';
import { DomainError, ValidationError, type ValidationIssue } from '@packetagent/contracts';
import { RemoteCommandError } from '@packetagent/bus';

/** An RFC 9457 problem document, as every error leaves the API. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  requestId: string;
  errors?: ValidationIssue[];
}

export interface Problem {
  status: number;
  body: ProblemBody;
  headers: Record<string, string>;
  /** Set for 5xx answers: what went wrong, for the log only. */
  cause?: unknown;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * HTTP status of each DomainError code. A code not listed falls back to its suffix (see
 * `problemStatusFor`), so a service can name a new code `<thing>_not_found` or `<thing>_conflict`
 * without touching this table.
 */
export const PROBLEM_STATUS_BY_CODE: Readonly<Record<string, number>> = Object.freeze({
  validation_failed: 400,
  invalid_event: 400,
  event_schema_mismatch: 400,
  malformed_envelope: 400,
  bad_request: 400,
  invalid_recipient_key: 400,
  sealed_credential_invalid: 400,
  invalid_definition: 400,
  invalid_overrides: 400,
  broadening_override: 400,
  invalid_cron: 400,
  unauthenticated: 401,
  invalid_credentials: 401,
  invalid_totp_code: 401,
  totp_required: 401,
  api_key_invalid: 401,
  webhook_signature_invalid: 401,
  webhook_timestamp_stale: 401,
  forbidden: 403,
  credential_grant_invalid: 403,
  credential_grant_expired: 403,
  permission_denied: 403,
  csrf_token_invalid: 403,
  access_policy_missing: 403,
  role_ceiling_exceeded: 403,
  invalid_setup_token: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  concurrency_conflict: 409,
  command_in_progress: 409,
  already_exists: 409,
  worker_name_taken: 409,
  deployment_revoked: 409,
  invalid_transition: 409,
  webhook_replayed: 409,
  attention_already_answered: 409,
  credential_grant_used: 409,
  timer_not_pending: 409,
  run_not_quarantined: 409,
  // Migrating a run (MigrationErrorCodes): only a waiting run, only to the deployed version, not while a replica drives it.
  run_not_waiting: 409,
  version_not_deployed: 409,
  // PacketADE (services/gateway/src/packetade)
  actor_token_invalid: 401,
  publisher_untrusted: 403,
  package_unsigned: 403,
  package_worker_mismatch: 409,
  cursor_regression: 409,
  cursor_ahead: 409,
  cursor_revision_mismatch: 412,
  run_busy: 409,
  // Computers (ComputerErrorCodes): a host key to confirm (it carries issues: ComputerProblemFilter keeps it 409)
  // or that changed, a record changed since it was read, or one damaged or from a newer version (kept as it is, never reset).
  host_key_unpinned: 409,
  host_key_changed: 409,
  computer_version_conflict: 409,
  computer_record_unreadable: 409,
  computer_not_found: 404,
  // The request was sound; the computer did not answer to read its host key or run the probe.
  computer_unreachable: 422,
  gone: 410,
  setup_completed: 410,
  payload_too_large: 413,
  event_too_large: 413,
  definition_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  credential_undecryptable: 500,
  // Stored content that no longer hashes to its digest: the server's storage is at fault, and the detail names the digest.
  payload_digest_mismatch: 500,
  payload_size_mismatch: 500,
  unavailable: 503,
  master_key_unavailable: 503,
  grant_verification_unavailable: 503,
  transient_failure: 503,
  command_unavailable: 503,
  command_timeout: 503,
});

const SUFFIX_STATUS: ReadonlyArray<readonly [string, number]> = [
  ['_not_found', 404],
  ['_conflict', 409],
  ['_already_exists', 409],
  ['_forbidden', 403],
  ['_too_large', 413],
  ['_rate_limited', 429],
  ['_unavailable', 503],
];

/**
 * The status for a DomainError code: the table, then the suffix conventions; an unknown code
 * is a refusal the caller can act on (422), or 503 when repeating later may succeed.
 */
export function problemStatusFor(code: string, retryable = false): number {
  const listed = PROBLEM_STATUS_BY_CODE[code];
  if (listed !== undefined) return listed;
  const bySuffix = SUFFIX_STATUS.find(([suffix]) => code.endsWith(suffix));
  if (bySuffix) return bySuffix[1];
  return retryable ? 503 : 422;
}

const TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  410: 'Gone',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

const CODE_BY_STATUS: Readonly<Record<number, string>> = {
  400: 'bad_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  410: 'gone',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'unavailable',
};

const GENERIC_DETAIL = 'the request failed unexpectedly; quote the request id when reporting it';

export function problemTitle(status: number): string {
  return TITLES[status] ?? (status >= 500 ? 'Server Error' : 'Client Error');
}

function problemType(code: string): string {
  return `urn:packetagent:problem:${code}`;
}

function build(status: number, code: string, detail: string, requestId: string, extra: Partial<ProblemBody> = {}): ProblemBody {
  return { type: problemType(code), title: problemTitle(status), status, detail, code, requestId, ...extra };
}

function internal(requestId: string, cause: unknown): Problem {
  return { status: 500, body: build(500, 'internal_error', GENERIC_DETAIL, requestId), headers: {}, cause };
}

function retryAfterOf(error: DomainError): Record<string, string> {
  const seconds = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? { 'retry-after': String(Math.ceil(seconds)) } : {};
}

/** A framework-level client error (Fastify body parsing, limits, media types). */
function clientErrorStatus(error: unknown): number | null {
  if (!(error instanceof Error)) return null;
  const status = (error as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : null;
}

function httpExceptionDetail(exception: HttpException, status: number): string {
  if (status === HttpStatus.NOT_FOUND && /^Cannot [A-Z]+ /.test(exception.message)) return 'no route matches this method and path';
  if (status === HttpStatus.PAYLOAD_TOO_LARGE) return 'the request body is larger than the server accepts';
  const response = exception.getResponse();
  const message = typeof response === 'string' ? response : (response as { message?: unknown }).message;
  return typeof message === 'string' ? message : exception.message;
}

/**
 * Turns anything thrown while serving a request into a problem document. DomainErrors and
 * remote command errors are mapped by code; Nest HTTP exceptions and Fastify client errors by
 * status; anything else is a 500 whose cause goes to the log, never to the caller.
 */
export function toProblem(error: unknown, requestId: string): Problem {
  if (error instanceof RemoteCommandError) {
    if (error.code === 'internal_error') return internal(requestId, error);
    const status = error.issues.length ? 400 : problemStatusFor(error.code, error.retryable);
    const extra = error.issues.length ? { errors: error.issues.map(({ path, message }) => ({ path, message })) } : {};
    if (status >= 500) return { status, body: build(status, error.code, error.message, requestId), headers: {}, cause: error };
    return { status, body: build(status, error.code, error.message, requestId, extra), headers: {} };
  }
  if (error instanceof ValidationError) {
    const errors = error.issues.map(({ path, message }) => ({ path, message }));
    return { status: 400, body: build(400, error.code, 'the request is not valid', requestId, { errors }), headers: {} };
  }
  if (error instanceof DomainError) {
    const status = problemStatusFor(error.code, error.retryable);
    return { status, body: build(status, error.code, error.message, requestId), headers: retryAfterOf(error), ...(status >= 500 ? { cause: error } : {}) };
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    if (status >= 500) return internal(requestId, error);
    const code = CODE_BY_STATUS[status] ?? `http_${status}`;
    return { status, body: build(status, code, httpExceptionDetail(error, status), requestId), headers: {} };
  }
  const clientStatus = clientErrorStatus(error);
  if (clientStatus !== null) {
    const code = CODE_BY_STATUS[clientStatus] ?? `http_${clientStatus}`;
    // A JSON parse failure's message quotes the body; say what is wrong instead.
    const detail = error instanceof SyntaxError ? 'the request body is not valid JSON' : (error as Error).message;
    return { status: clientStatus, body: build(clientStatus, code, detail, requestId), headers: {} };
  }
  return internal(requestId, error);
}
