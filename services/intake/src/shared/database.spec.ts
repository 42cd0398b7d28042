import { v7 as uuidv7 } from 'uuid';
import { decodeCursor, encodeCursor, InvalidCursorError } from './database';

const cursorOf = (text: string) => Buffer.from(text).toString('base64url');

describe(decodeCursor.name, () => {
  it('gives back the id a cursor was encoded from', () => {
    const id = uuidv7();

    expect(decodeCursor(encodeCursor(id))).toBe(id);
  });

  it('reads no cursor as the first page', () => {
    expect(decodeCursor(null)).toBeNull();
    expect(decodeCursor('')).toBeNull();
  });

  it('refuses a cursor whose id is not a UUID with the typed 400 error', () => {
    for (const text of ['v1:x', 'v1:wrk_1', `v1:${uuidv7()}x`, `v1:${uuidv7().slice(0, 35)}`, "v1:' OR 1=1 --", `v1:${'a'.repeat(200)}`]) {
      expect(() => decodeCursor(cursorOf(text))).toThrow(InvalidCursorError);
    }
  });

  it('refuses a cursor without its version prefix', () => {
    expect(() => decodeCursor(cursorOf(uuidv7()))).toThrow(InvalidCursorError);
    expect(() => decodeCursor(cursorOf(`v2:${uuidv7()}`))).toThrow(InvalidCursorError);
  });

  it('names the cursor as the invalid field', () => {
    expect(() => decodeCursor(cursorOf('v1:nope'))).toThrow(expect.objectContaining({ code: 'validation_failed', issues: [{ path: 'cursor', message: 'not a cursor this API issued' }] }));
  });
});
