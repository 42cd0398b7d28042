import type { ToolName } from './known-tools';
import { normaliseResource, resourceCovers } from './resources';

describe(normaliseResource.name, () => {
  it.each<[ToolName, string, string]>([
    ['http_fetch', 'HTTPS://CI.Example.COM:443/builds/*', 'https://ci.example.com/builds/*'],
    ['http_fetch', 'http://ci.example.com:80', 'http://ci.example.com'],
    ['http_fetch', 'https://ci.example.com:8443/*', 'https://ci.example.com:8443/*'],
    ['http_fetch', 'https://ci.example.com./status', 'https://ci.example.com/status'],
    ['http_fetch', 'https://[2001:DB8:0::1]:8080/api/*', 'https://[2001:db8::1]:8080/api/*'],
    ['browser', 'https://*.Example.com/*', 'https://*.example.com/*'],
    ['browser', 'https://*.example.com./*', 'https://*.example.com/*'],
    ['http_fetch', 'https://ci.example.com/%7Euser/%2e%2E/a%2fb', 'https://ci.example.com/a%2Fb'],
    ['http_fetch', 'https://ci.example.com/a/./b/../../c/', 'https://ci.example.com/c/'],
    ['http_fetch', 'https://ci.example.com/..', 'https://ci.example.com/'],
    ['github_api', 'https://münchen.example/repos/*', 'https://xn--mnchen-3ya.example/repos/*'],
    ['git', 'https://github.com/acme/app.git', 'https://github.com/acme/app.git'],
    ['files', '**', '**'],
    ['files', './src//**/./*.ts', 'src/**/*.ts'],
    ['files', 'reports/2026/../*.md', 'reports/*.md'],
    ['files', 'reports/', 'reports'],
    ['run_command', 'git status', 'git status'],
    ['run_command', '  npm   run\tbuild  * ', 'npm run build *'],
    ['run_command', 'make', 'make'],
    ['slack_post', '#Releases', '#releases'],
    ['email_send', 'Ops@Example.COM', 'ops@example.com'],
    ['email_send', '*@example.com.', '*@example.com'],
  ])('normalises a %s resource %j to %j', (tool, raw, normal) => {
    expect(normaliseResource(tool, raw)).toEqual({ ok: true, value: normal });
  });

  it('gives the same normal form when applied twice', () => {
    const normal = normaliseResource('http_fetch', 'HTTPS://*.Example.COM.:443/a/%2E/b*');
    expect(normal.ok && normaliseResource('http_fetch', normal.value)).toEqual(normal);
  });

  it.each<[ToolName, string, string]>([
    ['http_fetch', 'https://%2a.example.com/', 'not a URL origin or glob: a wildcard is only allowed as a leading "*." followed by at least two labels'],
    ['http_fetch', 'https://*.[::1]/', 'not a URL origin or glob: a wildcard is only allowed as a leading "*." followed by at least two labels'],
    ['http_fetch', 'https://*.10.0.0.1/', 'not a URL origin or glob: a wildcard is only allowed as a leading "*." followed by at least two labels'],
    ['http_fetch', 'https://**.example.com/', 'not a URL origin or glob: a wildcard is only allowed as a leading "*." followed by at least two labels'],
    ['http_fetch', 'https://ci.example.com:99999/', 'not a URL origin or glob: the port must be a number from 1 to 65535'],
    ['http_fetch', 'https://ci.example.com/*/../admin', 'not a URL origin or glob: ".." after a wildcard segment is ambiguous'],
    ['http_fetch', 'https://ci.example.com/a b', 'not a URL origin or glob: contains whitespace, a control character or a backslash'],
    ['http_fetch', 'https://ci.example.com/%zz', 'not a URL origin or glob: malformed percent-encoding in the path'],
    ['http_fetch', 'https://ci.example.com/[x]', 'not a URL origin or glob: the path contains a character that must be percent-encoded'],
    ['http_fetch', 'https:///path', 'not a URL origin or glob: the host is missing'],
    ['files', '..', 'not a relative path glob inside the run workspace: ".." escapes the run workspace'],
    ['files', 'C:/Users', 'not a relative path glob inside the run workspace: absolute paths are not allowed'],
    ['files', '~/.ssh/*', 'not a relative path glob inside the run workspace: home-relative paths are not allowed'],
    ['files', 'a\\..\\b', 'not a relative path glob inside the run workspace: a backslash is not a path separator; use "/"'],
    ['files', '*/../../x', 'not a relative path glob inside the run workspace: ".." after a wildcard segment can escape the run workspace'],
    ['files', 'src/a**', 'not a relative path glob inside the run workspace: "**" must be a whole path segment'],
    ['files', 'src/{a,b}', 'not a relative path glob inside the run workspace: only the wildcards *, ** and ? are supported'],
    ['files', './', 'not a relative path glob inside the run workspace: names no path (use "**" for the whole run workspace)'],
    ['run_command', 'echo $HOME', 'not a command pattern: shell metacharacters ; | & $ < > ` are not allowed'],
    ['run_command', 'echo `id`', 'not a command pattern: shell metacharacters ; | & $ < > ` are not allowed'],
    ['run_command', 'npm test\nrm -rf .', 'not a command pattern: contains a control character'],
    ['run_command', '* --version', 'not a command pattern: the program must be a plain name without wildcards'],
    ['run_command', '-rf', 'not a command pattern: the program must be a plain name'],
    ['email_send', '*', 'not an email address or "*@domain"'],
    ['email_send', 'ops@localhost', 'not an email address or "*@domain": the domain must be a host name with at least two labels'],
    ['slack_post', '#', 'not a Slack channel: expected "#name"'],
    ['finish', 'anything', 'finish takes no resources'],
  ])('refuses a %s resource %j', (tool, raw, message) => {
    expect(normaliseResource(tool, raw)).toEqual({ ok: false, message });
  });
});

describe(resourceCovers.name, () => {
  it.each<[ToolName, string, string, boolean]>([
    ['http_fetch', 'https://*.example.com/*', 'https://api.example.com/v1/*', true],
    ['http_fetch', 'https://*.example.com/*', 'https://*.eu.example.com/status', true],
    ['http_fetch', 'https://*.example.com/*', 'https://example.com/', false],
    ['http_fetch', 'https://*.example.com/*', 'https://*.example.com', true],
    ['http_fetch', 'https://api.example.com/*', 'https://*.example.com/*', false],
    ['http_fetch', 'https://ci.example.com/*', 'https://ci.example.com', true],
    ['http_fetch', 'https://ci.example.com', 'https://ci.example.com/any/*', true],
    ['http_fetch', 'https://ci.example.com/builds/*', 'https://ci.example.com', false],
    ['http_fetch', 'https://ci.example.com/builds/*', 'https://ci.example.com/builds/42/log', true],
    ['http_fetch', 'https://ci.example.com/*/logs', 'https://ci.example.com/b/*/logs', true],
    ['http_fetch', 'https://ci.example.com/a*', 'https://ci.example.com/*', false],
    ['http_fetch', 'https://ci.example.com/*', 'http://ci.example.com/x', false],
    ['http_fetch', 'https://ci.example.com/*', 'https://ci.example.com:8443/x', false],
    ['http_fetch', 'https://ci.example.com/*', 'https://ci.example.com.evil.example/x', false],
    ['files', '**', 'a/b/*.md', true],
    ['files', 'src/**', 'src/a/b/*.ts', true],
    ['files', 'src/**', 'src', true],
    ['files', '**/*.ts', 'src/x.ts', true],
    ['files', 'src/*', 'src/**', false],
    ['files', 'src/*', 'src/*/x', false],
    ['files', '*.md', 'docs/a.md', false],
    ['files', 'a/*.txt', 'a/?.txt', true],
    ['files', 'a/?.txt', 'a/*.txt', false],
    ['files', 'a/?.txt', 'a/b.txt', true],
    ['run_command', 'npm *', 'npm test', true],
    ['run_command', 'npm *', 'npm', true],
    ['run_command', 'npm run *', 'npm run build *', true],
    ['run_command', 'npm test', 'npm test *', false],
    ['run_command', 'npm *', 'npx test', false],
    ['email_send', '*@example.com', 'ops@example.com', true],
    ['email_send', 'ops@example.com', '*@example.com', false],
    ['email_send', '*@example.com', 'ops@sub.example.com', false],
    ['slack_post', '#releases', '#releases', true],
    ['slack_post', '#releases', '#random', false],
  ])('for %s, %j covers %j: %s', (tool, granted, requested, covered) => {
    expect(resourceCovers(tool, granted, requested)).toBe(covered);
  });
});
