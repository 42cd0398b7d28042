import type { BrowserContext } from 'playwright-core';
import { applyRedirectCookies } from './redirect-cookies';

function fakeContext() {
  const added: unknown[] = [];
  const cleared: unknown[] = [];
  const context = {
    addCookies: async (cookies: unknown[]) => void added.push(...cookies),
    clearCookies: async (filter: unknown) => void cleared.push(filter),
  } as unknown as BrowserContext;
  return { context, added, cleared };
}

describe(applyRedirectCookies.name, () => {
  const now = Date.UTC(2026, 0, 1);

  it('stores each cookie for the responding host only, with its path, flags and expiry', async () => {
    const { context, added } = fakeContext();

    await applyRedirectCookies(context, ['session=abc; Path=/app; HttpOnly; Secure; SameSite=Lax; Max-Age=60', 'theme=dark; Domain=example.com'], new URL('https://www.example.com/login/form'), now);

    expect(added).toEqual([
      { name: 'session', value: 'abc', domain: 'www.example.com', path: '/app', httpOnly: true, secure: true, sameSite: 'Lax', expires: now / 1000 + 60 },
      { name: 'theme', value: 'dark', domain: 'www.example.com', path: '/login' },
    ]);
  });

  it('deletes a cookie whose expiry has passed', async () => {
    const { context, added, cleared } = fakeContext();

    await applyRedirectCookies(context, ['session=; Path=/; Max-Age=0', 'old=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT'], new URL('https://example.com/logout'), now);

    expect(added).toEqual([]);
    expect(cleared).toEqual([
      { name: 'session', domain: 'example.com', path: '/' },
      { name: 'old', domain: 'example.com', path: '/' },
    ]);
  });

  it('drops what Chromium would refuse: a Secure cookie over http, SameSite=None without Secure, a line without a name', async () => {
    const { context, added } = fakeContext();

    await applyRedirectCookies(context, ['a=1; Secure', 'b=2; SameSite=None', '=3', 'novalue'], new URL('http://example.com/'), now);

    expect(added).toEqual([]);
  });
});
