import { ValidationError } from '@packetagent/contracts';
import { callbackUrl } from './mcp-connections.controller';
import { connectedPage, consoleLocation, failedPage, prefersJson } from './oauth-callback-page';

describe(consoleLocation.name, () => {
  it('leads to the console page returnTo names, adding mcp_connected to its query', () => {
    expect(consoleLocation('/', 'tracker_oauth')).toBe('/?mcp_connected=tracker_oauth');
    expect(consoleLocation('/w/ws_1/workers/wk_1', 'tracker_oauth')).toBe('/w/ws_1/workers/wk_1?mcp_connected=tracker_oauth');
    expect(consoleLocation('/w/ws_1/workers/wk_1?tab=mcp&mcp_connected=old', 'tracker_oauth')).toBe('/w/ws_1/workers/wk_1?tab=mcp&mcp_connected=tracker_oauth');
  });

  it('never leads anywhere but a console page: another host, dot segments, the API, or no returnTo answer the page instead', () => {
    for (const returnTo of [null, '//evil.example/x', '///evil.example', '/\\evil.example', '/../api/v1/openapi.json', '/w/%2e%2e/%2e%2e/api/v1', '/w/../../api/v1', '/api/v1/workspaces', '/api', '/hooks/x', 'https://evil.example/w', 'w/ws_1']) {
      expect([returnTo, consoleLocation(returnTo, 'c')]).toEqual([returnTo, null]);
    }
  });
});

describe(prefersJson.name, () => {
  it.each([
    ['application/json', true],
    ['application/problem+json', true],
    ['application/json, application/problem+json', true],
    ['text/html;q=0.5, application/json', true],
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', false],
    ['*/*', false],
    ['', false],
    [undefined, false],
    ['application/json;q=0', false],
    ['application/*', true],
    ['text/*, application/json;q=0.9', false],
    ['garbage', false],
  ])('%s: %s', (accept, expected) => {
    expect(prefersJson(accept)).toBe(expected);
  });
});

describe(callbackUrl.name, () => {
  it('is under the public URL when one is configured, keeping its path prefix and dropping a query', () => {
    expect(callbackUrl('https://agents.example.com', { protocol: 'http', host: 'ignored' })).toBe('https://agents.example.com/api/v1/mcp/oauth/callback');
    expect(callbackUrl('https://agents.example.com/pa/?x=1#f', { protocol: 'http', host: 'ignored' })).toBe('https://agents.example.com/pa/api/v1/mcp/oauth/callback');
  });

  it("is under the request's own origin otherwise, and refused for a Host header that is not a host", () => {
    expect(callbackUrl(undefined, { protocol: 'https', host: 'Agents.Example.com:8443' })).toBe('https://agents.example.com:8443/api/v1/mcp/oauth/callback');
    expect(callbackUrl(undefined, { protocol: 'http', host: '127.0.0.1:80' })).toBe('http://127.0.0.1/api/v1/mcp/oauth/callback');
    expect(callbackUrl(undefined, { protocol: 'http', host: '[::1]:8484' })).toBe('http://[::1]:8484/api/v1/mcp/oauth/callback');
    for (const host of ['', 'evil.example/path', 'user@evil.example', 'a b', 'evil.example:99999999', 'evil.example:70000']) {
      expect(() => callbackUrl(undefined, { protocol: 'http', host })).toThrow(ValidationError);
    }
  });
});

describe('the callback pages', () => {
  it('escape what they show and carry the nonce of their CSP', () => {
    const connected = connectedPage('tracker_oauth', 'https://mcp.example.com/mcp?a=<b>');
    const failed = failedPage('<img src=x onerror=alert(1)> "quoted"', 'req-1');

    expect(connected.html).toContain('https://mcp.example.com/mcp?a=&#60;b&#62;');
    expect(failed.html).toContain('&#60;img src=x onerror=alert(1)&#62; &#34;quoted&#34;');
    for (const page of [connected, failed]) {
      const nonce = /'nonce-([^']+)'/.exec(page.csp)?.[1];
      expect(page.html).toContain(`<style nonce="${nonce}">`);
      expect(page.html).not.toMatch(/<script|<link|<img/);
    }
  });
});
