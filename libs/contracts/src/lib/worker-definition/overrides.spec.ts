import { BroadeningOverrideError, InvalidOverridesError } from './errors';
import { narrowDefinition } from './overrides';
import { parseWorkerDefinition } from './parse';

const version = parseWorkerDefinition(
  `
apiVersion: packetagent/v1
kind: Worker
name: build-watcher
model: { preset: default }
instructions: Watch builds and report.
tools:
  - tool: http_fetch
    verbs: [GET, POST]
    resources: ["https://*.example.com/*", "https://ci.acme.dev/builds/*"]
    approval: first_use
    credentials: [ci_token]
  - { tool: files, verbs: [read, write], resources: ["reports/**"], approval: never }
  - { tool: slack_post, credentials: [slack_bot] }
  - { tool: run_command, verbs: [exec], resources: ["npm *"], computers: [build-box, arm-runner] }
budgets:
  perRunUsd: 0.5
  perDeploymentDailyUsd: 5
  actions: { slack_post: { perDay: 10 } }
exit: { finish: { criteria: ["the report was posted"] } }
triggers:
  - { name: morning, cron: "0 9 * * *" }
  - { webhook: {} }
  - { manual: {} }
`,
  'yaml',
);

function broadeningOf(overrides: unknown): BroadeningOverrideError {
  try {
    narrowDefinition(version, overrides);
  } catch (error) {
    if (error instanceof BroadeningOverrideError) return error;
    throw error;
  }
  throw new Error('the overrides were accepted');
}

describe(narrowDefinition.name, () => {
  it('returns the version unchanged when there are no overrides', () => {
    expect(narrowDefinition(version, undefined)).toEqual(version);
    expect(narrowDefinition(version, {})).toEqual(version);
  });

  it('applies a narrowing: replaced grants, lower or added budgets, lower bounds, disabled triggers', () => {
    const sut = narrowDefinition(version, {
      tools: [
        { tool: 'http_fetch', verbs: ['GET'], resources: ['HTTPS://API.example.com/v1/*', 'https://ci.acme.dev/builds/42/*'], approval: 'always', credentials: [] },
        { tool: 'slack_post', resources: ['#releases'] },
      ],
      budgets: { perRunUsd: 0.2, perDeploymentHourlyUsd: 1, actions: { slack_post: { perRun: 1, perDay: 5 }, email_send: { perDay: 3 } } },
      bounds: { maxWallSeconds: 300, maxConcurrentRuns: 2 },
      triggers: { disable: ['morning'] },
    });
    expect(sut.tools).toEqual([
      { tool: 'http_fetch', verbs: ['GET'], resources: ['https://api.example.com/v1/*', 'https://ci.acme.dev/builds/42/*'], approval: 'always', credentials: [] },
      version.tools[1],
      { tool: 'slack_post', verbs: ['post'], resources: ['#releases'], approval: 'always', credentials: ['slack_bot'] },
      version.tools[3],
    ]);
    expect(sut.budgets).toEqual({
      perRunUsd: 0.2,
      perDeploymentHourlyUsd: 1,
      perDeploymentDailyUsd: 5,
      actions: { slack_post: { perRun: 1, perDay: 5 }, email_send: { perDay: 3 } },
    });
    expect(sut.bounds).toEqual({ maxWallSeconds: 300, maxIterations: 20, maxToolCalls: 40, maxConcurrentRuns: 2 });
    // The remaining triggers keep the keys they had in the version.
    expect(sut.triggers).toEqual([{ webhook: {}, name: 'webhook-1' }, { manual: {}, name: 'manual-2' }]);
    expect(sut.exit).toEqual(version.exit);
  });

  it.each<[string, unknown, string, string]>([
    ['a verb the version lacks', { tools: [{ tool: 'http_fetch', verbs: ['GET', 'DELETE'] }] }, 'overrides.tools[0].verbs[1]', '"DELETE" is not granted by the version'],
    [
      'a URL outside the version\'s globs',
      { tools: [{ tool: 'http_fetch', resources: ['https://evil.example.net/*'] }] },
      'overrides.tools[0].resources[0]',
      '"https://evil.example.net/*" is not covered by the version\'s resources',
    ],
    [
      'the apex of a wildcard host',
      { tools: [{ tool: 'http_fetch', resources: ['https://example.com/*'] }] },
      'overrides.tools[0].resources[0]',
      '"https://example.com/*" is not covered by the version\'s resources',
    ],
    ['a wider path glob', { tools: [{ tool: 'files', resources: ['**'] }] }, 'overrides.tools[0].resources[0]', '"**" is not covered by the version\'s resources'],
    ['another program', { tools: [{ tool: 'run_command', resources: ['npx *'] }] }, 'overrides.tools[0].resources[0]', '"npx *" is not covered by the version\'s resources'],
    ['a weaker approval', { tools: [{ tool: 'http_fetch', approval: 'never' }] }, 'overrides.tools[0].approval', '"never" is weaker than the version\'s "first_use"'],
    ['first_use under always', { tools: [{ tool: 'slack_post', approval: 'first_use' }] }, 'overrides.tools[0].approval', '"first_use" is weaker than the version\'s "always"'],
    ['a credential the version lacks', { tools: [{ tool: 'http_fetch', credentials: ['ci_token', 'admin_token'] }] }, 'overrides.tools[0].credentials[1]', '"admin_token" is not granted by the version'],
    ['a computer the version lacks', { tools: [{ tool: 'run_command', computers: ['build-box', 'prod-db'] }] }, 'overrides.tools[0].computers[1]', '"prod-db" is not granted by the version'],
    ['a tool the version lacks', { tools: [{ tool: 'github_api', verbs: ['GET'], resources: ['https://api.github.com/*'] }] }, 'overrides.tools[0].tool', '"github_api" is not granted by the version'],
    ['a higher budget', { budgets: { perRunUsd: 2 } }, 'overrides.budgets.perRunUsd', "2 exceeds the version's 0.5"],
    ['a higher action limit', { budgets: { actions: { slack_post: { perDay: 20 } } } }, 'overrides.budgets.actions.slack_post.perDay', "20 exceeds the version's 10"],
    ['budget requests the version does not make', { budgets: { onExhausted: 'request' } }, 'overrides.budgets.onExhausted', "request is broader than the version's end"],
    ['a request step above the run limit it defaults to', { budgets: { requestStepUsd: 0.75 } }, 'overrides.budgets.requestStepUsd', "0.75 exceeds the version's 0.5"],
    ['a higher bound', { bounds: { maxWallSeconds: 900 } }, 'overrides.bounds.maxWallSeconds', "900 exceeds the version's 600"],
    ['a bound above the version\'s default', { bounds: { maxConcurrentRuns: 11 } }, 'overrides.bounds.maxConcurrentRuns', "11 exceeds the version's 10"],
  ])('refuses %s', (_name, overrides, path, message) => {
    const error = broadeningOf(overrides);
    expect(error.code).toBe('broadening_override');
    expect(error.issues).toEqual([{ path, message }]);
  });

  it('turns budget requests off, or asks for less, when the version makes them', () => {
    const requesting = narrowDefinition(version, { budgets: { onExhausted: 'end' } });
    expect(requesting.budgets.onExhausted).toBe('end');
    const asking = { ...version, budgets: { ...version.budgets, onExhausted: 'request' as const, requestStepUsd: 0.4 } };
    expect(narrowDefinition(asking, { budgets: { onExhausted: 'end' } }).budgets).toMatchObject({ onExhausted: 'end', requestStepUsd: 0.4 });
    expect(narrowDefinition(asking, { budgets: { onExhausted: 'request', requestStepUsd: 0.1 } }).budgets).toMatchObject({ onExhausted: 'request', requestStepUsd: 0.1 });
  });

  it('narrows the computers of run_command to a subset, or to the local sandbox only', () => {
    const subset = narrowDefinition(version, { tools: [{ tool: 'run_command', computers: ['arm-runner'] }] });
    expect(subset.tools[3]).toEqual({ tool: 'run_command', verbs: ['exec'], resources: ['npm *'], approval: 'always', credentials: [], computers: ['arm-runner'] });
    const local = narrowDefinition(version, { tools: [{ tool: 'run_command', computers: [] }] });
    expect(local.tools[3]).not.toHaveProperty('computers');
    expect(narrowDefinition(version, { tools: [{ tool: 'run_command', resources: ['npm test'] }] }).tools[3]).toMatchObject({ computers: ['build-box', 'arm-runner'] });
  });

  it('refuses computers in the overrides of a tool other than run_command', () => {
    expect(() => narrowDefinition(version, { tools: [{ tool: 'files', computers: ['build-box'] }] })).toThrow(
      expect.objectContaining({ code: 'invalid_overrides', issues: [{ path: 'overrides.tools[0].computers', message: 'files takes no computers: only run_command and the tools of MCP servers run on registered computers' }] }),
    );
  });

  it('names every broadening field at once', () => {
    const error = broadeningOf({
      tools: [{ tool: 'files', verbs: ['read', 'delete'], approval: 'always' }],
      budgets: { perDeploymentDailyUsd: 50 },
    });
    expect(error.issues.map((issue) => issue.path)).toEqual(['overrides.tools[0].verbs[1]', 'overrides.budgets.perDeploymentDailyUsd']);
  });

  it('refuses malformed overrides with their paths', () => {
    const malformed = () => narrowDefinition(version, { tools: [{ tool: 'http_fetch', resources: ['https://*'] }], budgets: { perRunUsd: 0 }, limits: {} });
    expect(malformed).toThrow(InvalidOverridesError);
    expect(malformed).toThrow(
      expect.objectContaining({
        code: 'invalid_overrides',
        issues: [
          { path: 'overrides.tools[0].resources[0]', message: 'not a URL origin or glob: a wildcard is only allowed as a leading "*." followed by at least two labels' },
          { path: 'overrides.budgets.perRunUsd', message: 'must be greater than 0' },
          { path: 'overrides.limits', message: 'unknown key (allowed: tools, budgets, bounds, triggers)' },
        ],
      }),
    );
  });

  it('refuses to disable a trigger the version does not have', () => {
    expect(() => narrowDefinition(version, { triggers: { disable: ['webhook-1', 'evening'] } })).toThrow(
      expect.objectContaining({
        code: 'invalid_overrides',
        issues: [{ path: 'overrides.triggers.disable[1]', message: 'no trigger "evening" in the version (keys: morning, webhook-1, manual-2)' }],
      }),
    );
  });
});
