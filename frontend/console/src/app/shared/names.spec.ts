import { Names } from './names';

describe(Names.name, () => {
  const sut = new Names({
    workers: [{ id: 'wrk_1', name: 'health-report' }],
    deployments: [{ id: 'dep_1', workerId: 'wrk_1', workerName: 'health-report', version: 3, state: 'active' }],
    users: [{ id: '0190-user', email: 'operator@example.com', role: 'owner' }],
    apiKeys: [{ id: 'k1abcdefgh', name: 'ci deploys' }],
  });

  it('names workers and deployments, keeping the id for the tooltip', () => {
    expect(sut.worker('wrk_1')).toEqual({ label: 'health-report', id: 'wrk_1', known: true });
    expect(sut.deployment('dep_1')).toEqual({ label: 'health-report v3', id: 'dep_1', known: true });
  });

  it('falls back to a name the caller already has, then to the id itself', () => {
    expect(sut.worker('wrk_2', 'triage')).toEqual({ label: 'triage', id: 'wrk_2', known: true });
    expect(sut.worker('wrk_2')).toEqual({ label: 'wrk_2', id: 'wrk_2', known: false });
    expect(sut.deployment('dep_9')).toEqual({ label: 'dep_9', id: 'dep_9', known: false });
  });

  it('names people by e-mail, API keys by name and services by kind', () => {
    expect(sut.actor({ kind: 'user', id: '0190-user' }).label).toBe('operator@example.com');
    expect(sut.actor({ kind: 'api_key', id: 'k1abcdefgh' }).label).toBe('API key “ci deploys”');
    expect(sut.actor({ kind: 'user', id: 'gone' })).toEqual({ label: 'user gone', id: 'gone', known: false });
    expect(sut.actor({ kind: 'service', id: 'supervisor' }).label).toBe('service supervisor');
    expect(sut.actor(null).label).toBe('unknown');
  });

  it('names the owner of a worker or deployment budget scope', () => {
    expect(sut.scopeOwner('deployment', 'dep_1').label).toBe('health-report v3');
    expect(sut.scopeOwner('worker', 'wrk_1').label).toBe('health-report');
    expect(sut.scopeOwner('workspace', 'ws_1')).toEqual({ label: 'ws_1', id: 'ws_1', known: false });
  });
});
