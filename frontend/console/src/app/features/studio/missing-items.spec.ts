import { groupMissing, missingFromRefusal, readinessLabel } from './missing-items';

describe(groupMissing.name, () => {
  it('groups missing items by kind, credentials first, leaving out kinds with nothing missing', () => {
    const sut = groupMissing([
      { kind: 'provider', name: 'preset:default', reason: 'no API key' },
      { kind: 'credential', name: 'oncall_webhook', reason: 'not stored in the workspace vault' },
      { kind: 'credential', name: 'support_mailbox', reason: 'not stored in the workspace vault' },
    ]);
    expect(sut.map((group) => [group.heading, group.items.map((item) => item.name)])).toEqual([
      ['Credentials', ['oncall_webhook', 'support_mailbox']],
      ['Model providers', ['preset:default']],
    ]);
  });

  it('answers no groups when nothing is missing', () => {
    expect(groupMissing([])).toEqual([]);
  });
});

describe(missingFromRefusal.name, () => {
  it('reads each missing item of a deployment refusal from its path', () => {
    expect(
      missingFromRefusal([
        { path: 'credentials.github_token', message: 'not stored in the workspace vault' },
        { path: 'providers.preset:default', message: 'preset default resolves to no configured provider' },
        { path: 'computers.build.box', message: 'not registered' },
      ]),
    ).toEqual([
      { kind: 'credential', name: 'github_token', reason: 'not stored in the workspace vault' },
      { kind: 'provider', name: 'preset:default', reason: 'preset default resolves to no configured provider' },
      { kind: 'computer', name: 'build.box', reason: 'not registered' },
    ]);
  });

  it('keeps an issue at a path it does not know, under that path', () => {
    expect(missingFromRefusal([{ path: 'something', message: 'odd' }, { path: '', message: 'whole' }])).toEqual([
      { kind: 'tool', name: 'something', reason: 'odd' },
      { kind: 'tool', name: '(definition)', reason: 'whole' },
    ]);
  });
});

describe(readinessLabel.name, () => {
  it('says ready, or counts what is missing', () => {
    expect(readinessLabel({ ready: true, missing: [] })).toEqual({ text: 'Ready to run here', tone: 'ok' });
    expect(readinessLabel({ ready: false, missing: [{}] })).toEqual({ text: 'Needs 1 thing', tone: 'warn' });
    expect(readinessLabel({ ready: false, missing: [{}, {}, {}] })).toEqual({ text: 'Needs 3 things', tone: 'warn' });
    expect(readinessLabel(undefined)).toEqual({ text: 'Checking readiness…', tone: 'neutral' });
    expect(readinessLabel(null)).toEqual({ text: 'Readiness not known', tone: 'neutral' });
  });
});
