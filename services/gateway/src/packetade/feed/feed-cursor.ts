import { ValidationError } from '@packetagent/contracts';

/**
 * A feed cursor is the global position of the last event a client has: decimal digits, "0"
 * before the first. Positions are what SSE ids carry too, so a Last-Event-ID is a cursor.
 */
const CURSOR = /^(0|[1-9][0-9]{0,15})$/;

export function parseFeedCursor(value: string, path: string): number {
  if (!CURSOR.test(value)) throw new ValidationError('invalid cursor', [{ path, message: 'a feed cursor: the decimal position of an event, or "0"' }]);
  const position = Number(value);
  if (!Number.isSafeInteger(position)) throw new ValidationError('invalid cursor', [{ path, message: 'out of range' }]);
  return position;
}

export const formatFeedCursor = (position: number): string => String(position);
