import { toProblem } from '../../shared/problem';
import { formatAge, hostKeyWarning, observedAgoMs, presentedHostKeyOf, statusShown, targetOf } from './computer-status';
import type { ComputerStatus, ComputerView } from './computers.api';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const KEY = `SHA256:${'k'.repeat(43)}`;

function status(fields: Partial<ComputerStatus> = {}): ComputerStatus {
  return { state: 'unknown', observedAt: null, ageMs: null, staleAfterMs: 45_000, detail: '', hostKey: { state: 'pinned', presented: null, at: null }, ...fields };
}

describe(statusShown.name, () => {
  it('shows online with the age the server measured, plus the time since it answered', () => {
    expect(statusShown(status({ state: 'online', observedAt: '2026-03-01T11:59:56.000Z', ageMs: 4_000 }), 0, NOW)).toEqual({ state: 'online', text: 'online, observed 4 s ago', tone: 'ok' });
    expect(statusShown(status({ state: 'online', ageMs: 4_000 }), 6_000, NOW).text).toBe('online, observed 10 s ago');
  });

  it('stops claiming online once the page has been open past the staleness window', () => {
    expect(statusShown(status({ state: 'online', ageMs: 40_000 }), 6_000, NOW)).toEqual({ state: 'unknown', text: 'unknown: last observed 46 s ago (stale after 45 s)', tone: 'warn' });
  });

  it('says when an unknown status was last observed, or that it never was', () => {
    expect(statusShown(status({ ageMs: 180_000 }), 0, NOW).text).toBe('unknown: last observed 3 min ago (stale after 45 s)');
    expect(statusShown(status(), 0, NOW)).toEqual({ state: 'unknown', text: 'unknown: never observed', tone: 'warn' });
  });

  it('never shows online without an observation to back it', () => {
    expect(statusShown(status({ state: 'online' }), 0, NOW).state).toBe('unknown');
  });

  it('says why a computer is offline, and shows a state it does not know as sent', () => {
    expect(statusShown(status({ state: 'offline', detail: 'connection refused', ageMs: 61_000 }), 0, NOW)).toEqual({ state: 'offline', text: 'offline: connection refused, observed 1 min ago', tone: 'bad' });
    expect(statusShown(status({ state: 'degraded' }), 0, NOW)).toEqual({ state: 'degraded', text: 'degraded', tone: 'neutral' });
  });
});

describe(observedAgoMs.name, () => {
  it('falls back to the observation time against the local clock when the server gave no age', () => {
    expect(observedAgoMs(status({ observedAt: '2026-03-01T11:58:00.000Z' }), 5_000, NOW)).toBe(120_000);
    expect(observedAgoMs(status({ observedAt: 'not a time' }), 0, NOW)).toBeNull();
    expect(observedAgoMs(status({ observedAt: '2026-03-01T12:00:05.000Z' }), 0, NOW)).toBe(0);
  });
});

describe(formatAge.name, () => {
  it('rounds down, so an age never reads fresher than it is', () => {
    expect([0, 59_999, 60_000, 3_599_999, 3_600_000, 172_800_000].map(formatAge)).toEqual(['0 s', '59 s', '1 min', '59 min', '1 h', '2 d']);
  });
});

describe(hostKeyWarning.name, () => {
  it('names the key that is not pinned and when it was presented; nothing for a pinned or local one', () => {
    expect(hostKeyWarning(status({ hostKey: { state: 'changed', presented: KEY, at: '2026-03-01T11:59:00.000Z' } }))).toBe(
      `Host key changed: the computer presented ${KEY} at 2026-03-01T11:59:00.000Z, which is not pinned. Commands on it are refused until the record is updated.`,
    );
    expect(hostKeyWarning(status())).toBeNull();
    expect(hostKeyWarning(status({ hostKey: { state: 'not_applicable', presented: null, at: null } }))).toBeNull();
  });
});

describe(presentedHostKeyOf.name, () => {
  it('reads the fingerprint from the issue at acceptHostKey, else from the detail', () => {
    const withIssue = toProblem(409, { title: 'Conflict', code: 'host_key_unpinned', detail: 'not pinned', errors: [{ path: 'acceptHostKey', message: `the host presented ${KEY}: verify it` }] });
    const inDetail = toProblem(409, { title: 'Conflict', code: 'host_key_unpinned', detail: `the host presented ${KEY}` });
    const none = toProblem(409, { title: 'Conflict', code: 'host_key_unpinned', detail: `SHA256:${'k'.repeat(44)}` });

    expect(presentedHostKeyOf(withIssue)).toBe(KEY);
    expect(presentedHostKeyOf(inDetail)).toBe(KEY);
    expect(presentedHostKeyOf(none)).toBeNull();
  });
});

describe(targetOf.name, () => {
  it('is user@host:port over SSH, and says local for the sandbox', () => {
    const ssh = { ssh: { host: 'build-1.example.com', port: 2222, user: 'deploy', hostKeys: [], keyCredential: 'k' } } as unknown as ComputerView;
    expect(targetOf(ssh)).toBe('deploy@build-1.example.com:2222');
    expect(targetOf({ ssh: null } as unknown as ComputerView)).toBe('local sandbox');
  });
});
