import { HttpException, HttpStatus } from '@nestjs/common';
import { DomainError, ValidationError, type ValidationIssue } from '@packetagent/contracts';
import { RemoteCommandError } from '@packetagent/bus';
import { errorCodes as fastifyErrorCodes } from 'fastify';

/** An RFC 9457 problem document, as every error leaves the API. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  requestId: string;
  errors?: ValidationIssue[];
  /** With `errors`, when more issues were found than are listed: how many there were in all. */
  errorCount?: number;
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
  edit_invalid: 400,
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
  // Answering an attention (PolicyErrorCodes): not an approver its rules name; an edit outside the run's grants.
  approver_not_allowed: 403,
  edit_not_granted: 403,
  invalid_setup_token: 403,
  // Adding or removing a passkey needs a session that signed in or confirmed again within 10 minutes.
  reauthentication_required: 403,
  // A deployment of a version that lacks credentials, providers, tools or computers here (its issues name each).
  deployment_not_ready: 422,
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
  approval_already_recorded: 409,
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
  // Notifications (NotificationsErrorCodes): a forged or unknown link, a spent one, one sent for another version of the worker.
  callback_invalid: 404,
  callback_used: 409,
  callback_stale: 409,
  delivery_not_dead: 409,
  callback_expired: 410,
  gone: 410,
  setup_completed: 410,
  payload_too_large: 413,
  event_too_large: 413,
  definition_too_large: 413,
  unsupported_media_type: 415,
  // The HTTP boundary (boundary-errors.ts): refused before any route reads the request.
  invalid_characters: 400,
  invalid_cursor: 400,
  nesting_too_deep: 400,
  unsupported_charset: 415,
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

const MAX_DETAIL = 1_000;

function build(status: number, code: string, detail: string, requestId: string, extra: Partial<ProblemBody> = {}): ProblemBody {
  const bounded = detail.length > MAX_DETAIL ? `${detail.slice(0, MAX_DETAIL - 1)}…` : detail;
  return { type: problemType(code), title: problemTitle(status), status, detail: bounded, code, requestId, ...extra };
}

/**
 * A request can carry issues by the thousand (a body of 50,000 unknown keys): the answer lists
 * the first few, each cut short, and says how many there were, so an error stays a few KB.
 */
export const MAX_LISTED_ISSUES = 20;
const MAX_ISSUE_TEXT = 200;

function clip(text: string): string {
  return text.length > MAX_ISSUE_TEXT ? `${text.slice(0, MAX_ISSUE_TEXT - 1)}…` : text;
}

export function listedIssues(issues: readonly ValidationIssue[]): Pick<ProblemBody, 'errors' | 'errorCount'> {
  const errors = issues.slice(0, MAX_LISTED_ISSUES).map(({ path, message }) => ({ path: clip(path), message: clip(message) }));
  return issues.length > MAX_LISTED_ISSUES ? { errors, errorCount: issues.length } : { errors };
}

/**
 * Fastify's own client errors by code: a stable problem code and a detail that never quotes the
 * body. Those not listed keep their status and get the code of that status.
 */
const FASTIFY_CLIENT_ERRORS: Readonly<Record<string, { code: string; detail: string }>> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'bad_request', detail: 'the request body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'empty_body', detail: 'the request body is empty but its content type says JSON' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'unsupported_media_type', detail: 'the request body has a content type this route does not accept' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'invalid_content_length', detail: 'the request body size did not match its Content-Length' },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'payload_too_large', detail: 'the request body is larger than the server accepts' },
  FST_ERR_CTP_INVALID_TYPE: { code: 'bad_request', detail: 'the Content-Type header is not valid' },
};

/** Nest hands Fastify's errors to the filters as HttpExceptions that keep only the message: recognised by it, as Fastify words it. */
const FASTIFY_CLIENT_ERRORS_BY_MESSAGE: ReadonlyMap<string, { code: string; detail: string }> = new Map(
  Object.entries(FASTIFY_CLIENT_ERRORS).flatMap(([code, known]) => {
    const FastifyError = (fastifyErrorCodes as Record<string, (new () => Error) | undefined>)[code];
    return FastifyError ? [[new FastifyError().message, known] as const] : [];
  }),
);

function fastifyClientError(error: unknown): { code: string; detail: string } | undefined {
  const code = (error as { code?: unknown }).code;
  return (typeof code === 'string' ? FASTIFY_CLIENT_ERRORS[code] : undefined) ?? FASTIFY_CLIENT_ERRORS_BY_MESSAGE.get((error as Error).message);
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
    const extra = error.issues.length ? listedIssues(error.issues) : {};
    if (status >= 500) return { status, body: build(status, error.code, error.message, requestId), headers: {}, cause: error };
    return { status, body: build(status, error.code, error.message, requestId, extra), headers: {} };
  }
  if (error instanceof ValidationError) {
    const summary = (error as { summary?: unknown }).summary;
    const detail = typeof summary === 'string' ? summary : 'the request is not valid';
    // A few refusals carry issues without being malformed requests (deployment_not_ready: 422).
    const status = PROBLEM_STATUS_BY_CODE[error.code] ?? 400;
    return { status, body: build(status, error.code, detail, requestId, listedIssues(error.issues)), headers: {} };
  }
  if (error instanceof DomainError) {
    const status = problemStatusFor(error.code, error.retryable);
    return { status, body: build(status, error.code, error.message, requestId), headers: retryAfterOf(error), ...(status >= 500 ? { cause: error } : {}) };
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    if (status >= 500) return internal(requestId, error);
    const known = fastifyClientError(error);
    const code = known?.code ?? CODE_BY_STATUS[status] ?? `http_${status}`;
    return { status, body: build(status, code, known?.detail ?? httpExceptionDetail(error, status), requestId), headers: {} };
  }
  // The client closed the connection (or broke its framing) while its body was being read: no one is
  // left to answer, and nothing failed on this side.
  // Checked by shape: Node's own errors may come from another realm than this module's Error.
  if (typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'ECONNRESET') {
    return { status: 400, body: build(400, 'request_aborted', 'the request body did not arrive whole', requestId), headers: {} };
  }
  const clientStatus = clientErrorStatus(error);
  if (clientStatus !== null) {
    const known = fastifyClientError(error);
    const code = known?.code ?? CODE_BY_STATUS[clientStatus] ?? `http_${clientStatus}`;
    // A JSON parse failure's message quotes the body; say what is wrong instead.
    const detail = known?.detail ?? (error instanceof SyntaxError ? 'the request body is not valid JSON' : clip((error as Error).message));
    return { status: clientStatus, body: build(clientStatus, code, detail, requestId), headers: {} };
  }
  return internal(requestId, error);
}
