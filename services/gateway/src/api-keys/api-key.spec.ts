import { issueApiKey, parseApiKey } from './api-key';
import { sha256 } from '../identity/secrets';

describe(issueApiKey.name, () => {
  it('issues pa_<id>_<secret> whose secret hashes to the stored hash', () => {
    const sut = issueApiKey();
    const parsed = parseApiKey(sut.token);
    expect(parsed?.id).toBe(sut.id);
    expect(sha256(parsed!.secret).equals(sut.secretHash)).toBe(true);
    expect(sut.displayPrefix).toBe(`pa_${sut.id}_`);
    expect(sut.token.startsWith(sut.displayPrefix)).toBe(true);
  });

  it('issues a different key every time', () => {
    expect(issueApiKey().token).not.toBe(issueApiKey().token);
  });
});

describe(parseApiKey.name, () => {
  it('parses a secret that itself contains underscores', () => {
    const secret = `${'_'.repeat(3)}${'a'.repeat(40)}`;
    expect(parseApiKey(`pa_0123456789abcdef0123_${secret}`)).toEqual({ id: '0123456789abcdef0123', secret });
  });

  it('returns null when the shape is wrong', () => {
    expect(parseApiKey('pa_short_x')).toBeNull();
    expect(parseApiKey(`xx_0123456789abcdef0123_${'a'.repeat(43)}`)).toBeNull();
    expect(parseApiKey(`pa_0123456789abcdef0123_${'a'.repeat(44)}`)).toBeNull();
  });
});
