import { DomainError, SandboxErrorCodes } from '@packetagent/contracts';

/** Codes of a browser action that ended with `ok: false`. */
export const BrowserActionErrorCodes = {
  unavailable: SandboxErrorCodes.browserUnavailable,
  /** The action needs a selector or text the request does not carry. */
  invalidRequest: 'invalid_request',
  /** The page's URL, or a redirect of its navigation, is not granted or reaches a forbidden address. */
  navigationRefused: 'navigation_refused',
  /** The navigation failed for another reason (DNS, connection, an error page). */
  navigationFailed: 'navigation_failed',
  selectorNotFound: 'selector_not_found',
  timeout: 'timeout',
  /** Anything else Chromium refused (an invalid selector, an element that cannot be filled). */
  actionFailed: 'action_failed',
} as const;
export type BrowserActionErrorCode = (typeof BrowserActionErrorCodes)[keyof typeof BrowserActionErrorCodes];

/** Chromium is not installed where the options say, or does not start. */
export class BrowserUnavailableError extends DomainError {
  readonly code = SandboxErrorCodes.browserUnavailable;
}

/** A page-level failure of one action: answered as `ok: false`, never thrown to the caller. */
export class BrowserActionError extends DomainError {
  constructor(
    readonly code: BrowserActionErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
