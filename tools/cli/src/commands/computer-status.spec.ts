import { describeStatus, formatAge, hostKeyWarning, type ComputerStatus } from './computer-status';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const KEY = `SHA256:${'k'.repeat(43)}`;

function status(fields: Partial<ComputerStatus> = {}): ComputerStatus {
  return { state: 'unknown', observedAt: null, ageMs: null, staleAfterMs: 45_000, detail: '', hostKey: { state: 'pinned', presented: null, at: null }, ...fields };
}

describe(describeStatus.name, () => {
  it('says online with how long ago it was observed, by the age the server measured', () => {
    expect(describeStatus(status({ state: 'online', observedAt: '2026-03-01T11:00:00.000Z', ageMs: 4_200 }), NOW)).toBe('online, observed 4 s ago');
  });

  it('says when an unknown status was last observed and after how long it went stale', () => {
    expect(describeStatus(status({ observedAt: '2026-03-01T11:57:00.000Z', ageMs: 180_000 }), NOW)).toBe('unknown: last observed 3 min ago (stale after 45 s)');
  });

  it('says never observed when no probe was ever seen', () => {
    expect(describeStatus(status(), NOW)).toBe('unknown: never observed');
  });

  it('falls back to the observation time against the local clock when the server gave no age', () => {
    expect(describeStatus(status({ observedAt: '2026-03-01T11:58:00.000Z' }), NOW)).toBe('unknown: last observed 2 min ago (stale after 45 s)');
  });

  it('says why a computer is offline', () => {
    expect(describeStatus(status({ state: 'offline', detail: 'connection refused', ageMs: 61_000 }), NOW)).toBe('offline: connection refused, observed 1 min ago');
    expect(describeStatus(status({ state: 'offline', detail: 'connection refused' }), NOW)).toBe('offline: connection refused');
  });

  it('shows a state it does not know as the server sent it', () => {
    expect(describeStatus(status({ state: 'degraded', ageMs: 1_000 }), NOW)).toBe('degraded, observed 1 s ago');
  });
});

describe(formatAge.name, () => {
  it('rounds down, so an age never reads fresher than it is', () => {
    expect([0, 59_999, 60_000, 3_599_999, 3_600_000, 172_799_999, 172_800_000].map(formatAge)).toEqual(['0 s', '59 s', '1 min', '59 min', '1 h', '47 h', '2 d']);
    expect(formatAge(-5)).toBe('0 s');
  });
});

describe(hostKeyWarning.name, () => {
  it('names the key a computer presented that is not pinned, and when', () => {
    expect(hostKeyWarning(status({ hostKey: { state: 'changed', presented: KEY, at: '2026-03-01T11:59:00.000Z' } }))).toBe(
      `HOST KEY CHANGED: the computer presented ${KEY} at 2026-03-01T11:59:00.000Z, which is not pinned; commands on it are refused until the record is updated`,
    );
  });

  it('is null for a pinned key and for a local computer', () => {
    expect(hostKeyWarning(status())).toBeNull();
    expect(hostKeyWarning(status({ hostKey: { state: 'not_applicable', presented: null, at: null } }))).toBeNull();
  });
});
