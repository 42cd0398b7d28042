import { decoded } from '../testing/run-history';
import { runTimelineProjection, summarizeRunEvent } from './run-timeline.projection';

const at = { stream: 'run-run1', position: 40, version: 12 };
const requestedBy = { kind: 'user', id: 'u1' };

describe(summarizeRunEvent.name, () => {
  it('shows a migration as the versions it moved between, the decisions compared and who moved it', () => {
    const sut = summarizeRunEvent(
      decoded(
        'run.migrated',
        {
          from: { version: 2, digest: 'a'.repeat(64), effectiveDigest: 'b'.repeat(64) },
          to: { version: 3, digest: 'c'.repeat(64), effectiveDigest: 'd'.repeat(64) },
          decisionsCompared: 6,
          by: { kind: 'api_key', id: 'key1' },
        },
        at,
      ),
    );
    expect(sut).toEqual({ from: 2, to: 3, digest: 'c'.repeat(64), decisionsCompared: 6, by: { kind: 'api_key', id: 'key1' } });
  });

  it('shows a folded operator request with its reason, who asked and its place in the control stream', () => {
    expect(summarizeRunEvent(decoded('run.stop_requested', { reason: 'wrong input', controlVersion: 1, requestedBy }, at))).toEqual({ reason: 'wrong input', requestedBy, controlVersion: 1 });
    expect(summarizeRunEvent(decoded('run.pause_requested', { reason: null, controlVersion: 2, requestedBy }, at))).toEqual({ reason: null, requestedBy, controlVersion: 2 });
    expect(summarizeRunEvent(decoded('run.revoke_requested', { reason: 'key leaked', controlVersion: 3, requestedBy }, at))).toEqual({ reason: 'key leaked', requestedBy, controlVersion: 3 });
    expect(summarizeRunEvent(decoded('run.resume_requested', { controlVersion: 4, requestedBy }, at))).toEqual({ requestedBy, controlVersion: 4 });
  });

  it('shows a request recorded before requests were folded with its reason only', () => {
    expect(summarizeRunEvent(decoded('run.stop_requested', { reason: 'old' }, at))).toEqual({ reason: 'old' });
    expect(summarizeRunEvent(decoded('run.resume_requested', {}, at))).toEqual({});
  });
});

describe('runTimelineProjection', () => {
  it('records an event type it has no summary for as a line with an empty summary', () => {
    const [change] = runTimelineProjection.changes(decoded('run.annotated', { note: 'x' }, at));
    expect(change).toMatchObject({ table: 'run_timeline', key: { global_position: 40 } });
    const row = change!.evolve(null);
    expect(row).toMatchObject({ run_id: 'run1', stream_version: 12, type: 'run.annotated' });
    expect(row!['summary']).toEqual({});
  });

  it("writes nothing for the run's control stream: its requests reach the timeline folded into the run's stream", () => {
    expect(runTimelineProjection.changes(decoded('run.stop_requested', { reason: null }, { ...at, stream: 'runctl-run1' }))).toEqual([]);
  });
});
