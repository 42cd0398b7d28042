import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { canonicalJson } from '../json';
import { canonicalDefinition, credentialsOf } from './canonical';
import { parseWorkerDefinition } from './parse';

const EXAMPLE = resolve(__dirname, '../../../../../examples/release-audit.worker.yaml');

const yamlSource = `
apiVersion: packetagent/v1
kind: Worker
name: nightly-report
model: { preset: fast }
instructions: |
  Summarise yesterday's failed builds.
tools:
  - { tool: http_fetch, verbs: [GET], resources: ["HTTPS://CI.Example.com:443/builds/./*"], approval: never }
  - { tool: slack_post, credentials: [slack_bot] }
budgets: { perRunUsd: 0.25 }
exit: { finish: { criteria: ["the summary was posted"] } }
triggers:
  - { cron: "0 6 * * *" }
notifications:
  - { on: [failed], channel: slack, credential: slack_bot, to: "#builds" }
`;

// The same meaning: other key order, flow/indentation, spelt-out defaults, another URL spelling.
const jsonSource = JSON.stringify(
  {
    triggers: [{ missed: 'skip', timezone: 'UTC', cron: '0 6 * * *' }],
    notifications: [{ to: '#builds', credential: 'slack_bot', channel: 'slack', on: ['failed'] }],
    exit: { finish: { criteria: ['the summary was posted'] } },
    bounds: { maxToolCalls: 40, maxWallSeconds: 600 },
    budgets: { perRunUsd: 0.25 },
    tools: [
      { approval: 'never', resources: ['https://ci.example.com/builds/*'], verbs: ['GET'], tool: 'http_fetch' },
      { tool: 'slack_post', verbs: ['post'], approval: 'always', credentials: ['slack_bot'] },
    ],
    instructions: "Summarise yesterday's failed builds.\n",
    model: { preset: 'fast' },
    name: 'nightly-report',
    kind: 'Worker',
    apiVersion: 'packetagent/v1',
  },
  null,
  4,
);

describe(canonicalDefinition.name, () => {
  it('gives the same digest for the same meaning in YAML and in JSON', () => {
    const fromYaml = canonicalDefinition(parseWorkerDefinition(yamlSource, 'yaml'));
    const fromJson = canonicalDefinition(parseWorkerDefinition(jsonSource, 'json'));
    expect(fromJson).toEqual(fromYaml);
    expect(fromYaml.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it('gives another digest when the meaning changes', () => {
    const sut = canonicalDefinition(parseWorkerDefinition(yamlSource, 'yaml'));
    const cheaper = canonicalDefinition(parseWorkerDefinition(yamlSource.replace('perRunUsd: 0.25', 'perRunUsd: 0.2'), 'yaml'));
    expect(cheaper.digest).not.toBe(sut.digest);
  });

  it('keeps the digest of a definition that names no computer exactly as it was before computers existed', () => {
    expect(canonicalDefinition(parseWorkerDefinition(readFileSync(EXAMPLE), 'yaml')).digest).toBe('946dbf6d6621d25e8c791d764ead5e8790a2dfe5d6533b5909963e2a791c1656');
    expect(canonicalDefinition(parseWorkerDefinition(readFileSync(resolve(__dirname, '../../../../../examples/health-report.worker.yaml')), 'yaml')).digest).toBe(
      '31f4786b2eaf01a53954d40f4f1462181598529e28e4795678c17c150750d5be',
    );
  });

  it('leaves what a run does at its budget out of the canonical form unless it is written', () => {
    const sut = canonicalDefinition(parseWorkerDefinition(yamlSource, 'yaml'));
    const requesting = canonicalDefinition(parseWorkerDefinition(yamlSource.replace('perRunUsd: 0.25', 'perRunUsd: 0.25, onExhausted: request'), 'yaml'));
    expect(sut.canonical).not.toContain('onExhausted');
    expect(requesting.canonical).toContain('"onExhausted":"request"');
    expect(requesting.digest).not.toBe(sut.digest);
  });

  it('binds the computers of a run_command grant into the digest', () => {
    const withCommand = yamlSource.replace('tools:\n', 'tools:\n  - { tool: run_command, verbs: [exec], resources: ["make *"] }\n');
    const local = canonicalDefinition(parseWorkerDefinition(withCommand, 'yaml'));
    const remote = canonicalDefinition(parseWorkerDefinition(withCommand.replace('resources: ["make *"]', 'resources: ["make *"], computers: [build-box]'), 'yaml'));
    const none = canonicalDefinition(parseWorkerDefinition(withCommand.replace('resources: ["make *"]', 'resources: ["make *"], computers: []'), 'yaml'));
    expect(remote.digest).not.toBe(local.digest);
    expect(remote.canonical).toContain('"computers":["build-box"]');
    expect(none).toEqual(local);
  });

  it('is RFC 8785 JSON that parses back to the same version', () => {
    const sut = canonicalDefinition(parseWorkerDefinition(readFileSync(EXAMPLE), 'yaml'));
    expect(sut.canonical).toBe(canonicalJson(JSON.parse(sut.canonical)));
    expect(canonicalDefinition(parseWorkerDefinition(sut.canonical, 'json'))).toEqual(sut);
  });
});

describe(credentialsOf.name, () => {
  it('lists each credential of grants and notification routes once, sorted', () => {
    const sut = parseWorkerDefinition(yamlSource.replace('credentials: [slack_bot]', 'credentials: [slack_bot, ci_token]'), 'yaml');
    expect(credentialsOf(sut)).toEqual(['ci_token', 'slack_bot']);
    expect(credentialsOf(parseWorkerDefinition(readFileSync(EXAMPLE), 'yaml'))).toEqual(['ops_hook', 'slack_release_channel']);
  });
});
