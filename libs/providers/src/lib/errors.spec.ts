import { providerErrorFromHttp, redactServerText, retryAfterMsFromHeaders } from './errors';

describe(retryAfterMsFromHeaders.name, () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('prefers retry-after-ms, then reads retry-after as seconds or as a date', () => {
    expect(retryAfterMsFromHeaders(new Headers({ 'retry-after-ms': '1500.2', 'retry-after': '9' }), now)).toBe(1_501);
    expect(retryAfterMsFromHeaders(new Headers({ 'retry-after': '2' }), now)).toBe(2_000);
    expect(retryAfterMsFromHeaders(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }), now)).toBe(30_000);
    expect(retryAfterMsFromHeaders(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfterMsFromHeaders(new Headers(), now)).toBeUndefined();
  });
});

describe(redactServerText.name, () => {
  it('masks the key in use and anything shaped like a key, and cuts long text', () => {
    expect(redactServerText('bad key my-secret-key-123 given', 'my-secret-key-123')).toBe('bad key [redacted] given');
    expect(redactServerText('Incorrect API key provided: sk-proj-abc***************wxyz.')).toBe('Incorrect API key provided: [redacted].');
    expect(redactServerText('key AIzaSyA1234567890abcdefghijklmnop invalid')).toBe('key [redacted] invalid');
    expect(redactServerText('x'.repeat(1_000))).toHaveLength(301);
  });
});

describe(providerErrorFromHttp.name, () => {
  const base = { provider: 'openai' as const, model: 'gpt-5' };

  it.each([
    [429, 'provider_rate_limited', true],
    [500, 'provider_server_error', true],
    [503, 'provider_server_error', true],
    [408, 'provider_timeout', true],
    [401, 'provider_auth_failed', false],
    [403, 'provider_auth_failed', false],
    [400, 'provider_bad_request', false],
    [404, 'provider_bad_request', false],
  ])('maps HTTP %i to %s (retryable: %s)', (status, code, retryable) => {
    expect(providerErrorFromHttp({ ...base, status })).toMatchObject({ code, retryable, status, provider: 'openai', model: 'gpt-5' });
  });

  it('keeps the retry hint of a 429 or a 5xx', () => {
    expect(providerErrorFromHttp({ ...base, status: 429, headers: new Headers({ 'retry-after': '3' }) }).retryAfterMs).toBe(3_000);
    expect(providerErrorFromHttp({ ...base, status: 503, retryAfterMs: 1_200 }).retryAfterMs).toBe(1_200);
  });

  it('never quotes the server on a refused key', () => {
    const error = providerErrorFromHttp({ ...base, status: 401, serverMessage: 'Incorrect API key provided: abcd-1234' });

    expect(error.message).not.toContain('abcd-1234');
    expect(error.message).toContain('the API key was refused');
  });
});
