import { ANY_URL, BrowserGrants, NOT_GRANTED } from './browser-grants';

describe(BrowserGrants.name, () => {
  const sut = new BrowserGrants(['https://docs.example.com/guide/*', 'http://127.0.0.1:8080', 'https://*.cdn.example.net', 'not a grant']);

  it('lets through a URL a grant covers, whatever its query and fragment', () => {
    expect(sut.refusal('https://docs.example.com/guide/intro?lang=en#top')).toBeNull();
    expect(sut.refusal('http://127.0.0.1:8080/any/path')).toBeNull();
    expect(sut.refusal('https://static.cdn.example.net/app.js')).toBeNull();
  });

  it('compares in normal form: default ports, case and dot segments', () => {
    expect(new BrowserGrants(['https://Docs.Example.com:443']).refusal('https://docs.example.com/a/../b')).toBeNull();
    expect(sut.refusal('https://docs.example.com/guide/../admin')).toBe(NOT_GRANTED);
  });

  it('refuses another path, port, scheme or host', () => {
    for (const url of ['https://docs.example.com/admin', 'http://127.0.0.1:8081/', 'http://docs.example.com/guide/x', 'https://cdn.example.net/']) {
      expect(sut.refusal(url)).toBe(NOT_GRANTED);
    }
  });

  it('checks a WebSocket URL as its http(s) equivalent', () => {
    expect(sut.refusal('ws://127.0.0.1:8080/live')).toBeNull();
    expect(sut.refusal('wss://docs.example.com/socket')).toBe(NOT_GRANTED);
  });

  it('refuses what cannot be checked: other schemes, credentials, characters a grant cannot name', () => {
    expect(sut.refusal('file:///etc/passwd')).toBe('the file scheme is not allowed');
    expect(sut.refusal('http://user:secret@127.0.0.1:8080/')).toBe('credentials in the URL are not allowed');
    expect(sut.refusal('http://127.0.0.1:8080/a|b')).toMatch(/^the URL cannot be checked against the grants/);
    expect(sut.refusal('not a url')).toBe('not a valid URL');
  });

  it('grants nothing when given nothing', () => {
    expect(new BrowserGrants([]).refusal('https://docs.example.com/guide/intro')).toBe(NOT_GRANTED);
  });

  it('lets any http(s) URL through for a grant that names no resources, and still nothing else', () => {
    const any = new BrowserGrants([ANY_URL]);
    expect(any.refusal('https://anything.example.org/path?q=1')).toBeNull();
    expect(any.refusal('http://127.0.0.1:9/')).toBeNull();
    expect(any.refusal('file:///etc/passwd')).toBe('the file scheme is not allowed');
    expect(any.refusal('http://user:secret@example.org/')).toBe('credentials in the URL are not allowed');
  });
});
