import { toProblem, type Problem } from '../../shared/problem';

/**
 * The browser's own refusal of a WebAuthn ceremony (the person cancelled, or no passkey
 * matched), worded for a person; null for anything else, which is an API problem.
 */
export function ceremonyProblem(error: unknown): Problem | null {
  if (!(error instanceof Error)) return null;
  if (error.name === 'NotAllowedError' || error.name === 'AbortError') {
    return toProblem(0, { title: 'Passkey not used', detail: 'The browser was cancelled, timed out, or found no passkey for this site. Try again, or use your password.' });
  }
  if (error.name === 'InvalidStateError') {
    return toProblem(0, { title: 'Already registered', detail: 'This authenticator already holds a passkey for your account.' });
  }
  return null;
}
