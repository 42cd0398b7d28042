import { randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { CallbackTokens } from './callback-tokens';

describe(CallbackTokens.name, () => {
  const tokens = new CallbackTokens(randomBytes(32));
  const id = uuidv7();

  it('verifies the links it signed', () => {
    expect(tokens.verify(tokens.sign(id))).toBe(id);
  });

  it('refuses a link signed with another key, for another callback, or malformed', () => {
    const other = new CallbackTokens(randomBytes(32)).sign(id);
    expect(tokens.verify(other)).toBeNull();
    const [, mac] = tokens.sign(id).split('.');
    expect(tokens.verify(`${uuidv7()}.${mac}`)).toBeNull();
    expect(tokens.verify(id)).toBeNull();
    expect(tokens.verify(`${id}.`)).toBeNull();
    expect(tokens.verify('../../etc.passwd')).toBeNull();
    expect(tokens.verify(`${id}.${'A'.repeat(500)}`)).toBeNull();
  });

  it('needs a key of at least 32 bytes', () => {
    expect(() => new CallbackTokens(randomBytes(16))).toThrow('at least 32 bytes');
  });
});
