import type { ComputerRecord } from '@packetagent/contracts';
import { computerStatus, ObservationBoard, targetKey } from './computer-status';

const record = { kind: 'ssh', ssh: { host: 'h', port: 22, user: 'u', hostKeys: ['SHA256:k'], keyCredential: 'key' } } as unknown as ComputerRecord;
const at = new Date('2026-12-01T10:00:00.000Z');
const WINDOW = 1_000;

function board(): { board: ObservationBoard; advance(ms: number): void } {
  let now = 0;
  return { board: new ObservationBoard(() => now), advance: (ms) => (now += ms) };
}

const ok = { ok: true, affirmative: false, detail: 'Linux x86_64', probedAt: at, changedKey: null };
const refused = { ok: false, affirmative: true, detail: 'refused the connection', probedAt: at, changedKey: null };
const timedOut = { ok: false, affirmative: false, detail: 'did not finish the SSH handshake in time', probedAt: at, changedKey: null };

describe('computer status', () => {
  const status = (b: ObservationBoard) => computerStatus(record, b.get('ws', 'box', targetKey(record)), null, b.now(), WINDOW);

  it('given no probe received, is unknown, whatever was stored', () => {
    const stored = { probedAt: at, ok: true, affirmative: false, detail: 'Linux', lastSuccessAt: at, changedKey: null };
    expect(computerStatus(record, null, stored, 0, WINDOW)).toMatchObject({ state: 'unknown', observedAt: at.toISOString(), ageMs: null });
  });

  it('given a success, is online inside the window and unknown past it, never a stale online', () => {
    const { board: b, advance } = board();
    b.record('ws', 'box', targetKey(record), ok);
    advance(WINDOW);
    expect(status(b)).toMatchObject({ state: 'online', ageMs: WINDOW });
    advance(1);
    expect(status(b)).toMatchObject({ state: 'unknown', ageMs: WINDOW + 1, observedAt: at.toISOString() });
  });

  it('given an affirmative failure, is offline; given a timeout, keeps an earlier success in its window but never says offline', () => {
    const { board: b, advance } = board();
    b.record('ws', 'box', targetKey(record), ok);
    advance(100);
    b.record('ws', 'box', targetKey(record), timedOut);
    expect(status(b).state).toBe('online');
    advance(WINDOW);
    expect(status(b).state).toBe('unknown');
    b.record('ws', 'box', targetKey(record), refused);
    expect(status(b)).toMatchObject({ state: 'offline', detail: 'refused the connection' });
  });

  it('given a changed key, shows it; observations of another target do not count', () => {
    const { board: b } = board();
    b.record('ws', 'box', targetKey(record), { ...refused, changedKey: { presented: 'SHA256:new', at } });
    expect(status(b)).toMatchObject({ state: 'offline', hostKey: { state: 'changed', presented: 'SHA256:new' } });
    const moved = { ...record, ssh: { ...record.ssh!, host: 'elsewhere' } } as ComputerRecord;
    expect(computerStatus(moved, b.get('ws', 'box', targetKey(moved)), null, b.now(), WINDOW).state).toBe('unknown');
  });
});
