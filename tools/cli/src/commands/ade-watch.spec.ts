import { eventually } from '@packetagent/testing';
import type { CliIo } from '../cli';
import { ExitCode } from '../errors';
import { CliApi, type SeenRequest } from '../testing/cli-api.testkit';
import { AdeExitCode } from './ade-door-client';
import { endsRun, eventLine, MAX_RECONNECT_DELAY_MS, reconnectDelayMs, watchFeed, type StopSignal } from './ade-watch';

// Streams framed as the gateway's sseFeedSink writes them (id: <cursor>, event: <type>, data:
// <envelope>, `: heartbeat`, a last `closing` event), with `retry: 1` so a reconnection waits a
// millisecond: these tests cover what the command prints, sends back and exits with.

const FEED = '/api/v1/packetade/events';
const TOKEN = `pade_${'a'.repeat(20)}_${'s'.repeat(43)}`;
const RUN = 'run_1';

function event(position: number, type: string, stream = `run-${RUN}`) {
  return { id: `0193a000-0000-7000-8000-${String(position).padStart(12, '0')}`, type, stream, streamVersion: position, globalPosition: position, occurredAt: `2026-03-01T12:00:0${position % 10}.000Z`, actor: { kind: 'system', id: 'supervisor' }, data: {} };
}

const frame = (envelope: ReturnType<typeof event>) => `id: ${envelope.globalPosition}\nevent: ${envelope.type}\ndata: ${JSON.stringify(envelope)}\n\n`;
const stream = (...frames: string[]) => ({ status: 200, type: 'text/event-stream; charset=utf-8', body: `retry: 1\n: connected\n\n${frames.join('')}` });

describe(watchFeed.name, () => {
  let api: CliApi;
  let acknowledged: number;
  const streams = () => api.seen.map((request, i) => ({ ...request, lastEventId: api.headers[i]!['last-event-id'] })).filter((request) => request.url.startsWith(`${FEED}/stream`));
  const acks = () => api.seen.filter((request) => request.method === 'POST' && request.url === `${FEED}/ack`).map((request) => (JSON.parse(request.body) as { cursor: string }).cursor);
  const sut = (argv: string[], terminal: Pick<CliIo, 'onSignal'> = {}) => api.cli(['ade', 'watch', ...argv], terminal, { PACKETAGENT_ADE_TOKEN: TOKEN });

  beforeAll(async () => {
    api = await new CliApi().start();
    api.reply = { status: 404, body: { title: 'Not Found', status: 404, detail: 'no such route' } };
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.seen.length = 0;
    api.authorizations.length = 0;
    api.headers.length = 0;
    acknowledged = 0;
    api.routes = {
      [`GET /api/v1/packetade/runs/${RUN}`]: () => ({ status: 200, body: JSON.stringify({ id: RUN, deploymentId: 'dep_1', state: 'running' }) }),
      [`GET ${FEED}/ack`]: () => ({ status: 200, body: JSON.stringify({ cursor: String(acknowledged), revision: acknowledged }) }),
      [`POST ${FEED}/ack`]: (request: SeenRequest) => {
        const cursor = Number((JSON.parse(request.body) as { cursor: string }).cursor);
        if (cursor < acknowledged) return { status: 409, body: JSON.stringify({ title: 'Conflict', status: 409, code: 'cursor_regression', detail: `the acknowledged cursor is ${acknowledged}` }) };
        acknowledged = cursor;
        return { status: 200, body: JSON.stringify({ cursor: String(cursor), revision: cursor }) };
      },
    };
  });

  it('prints one line per event, acknowledges each after printing it, follows again after the last cursor when the connection drops, and exits 0 on run.succeeded', async () => {
    const answers = [stream(frame(event(5, 'deployment.created', 'deployment-dep_1')), frame(event(6, 'run.admitted'))), stream(': heartbeat\n\n', frame(event(7, 'run.succeeded')))];
    // The first connection asks after the cursor given; the next one names the last cursor printed.
    api.routes[`GET ${FEED}/stream?after=4`] = () => answers.shift()!;
    api.routes[`GET ${FEED}/stream`] = () => answers.shift()!;

    const answer = await sut(['--after', '4', '--ack', '--until-terminal', RUN]);

    expect(answer.code).toBe(ExitCode.ok);
    expect(answer.stdout).toBe(
      ['5  2026-03-01T12:00:05.000Z  deployment.created  deployment-dep_1', `6  2026-03-01T12:00:06.000Z  run.admitted  run-${RUN}`, `7  2026-03-01T12:00:07.000Z  run.succeeded  run-${RUN}`, ''].join('\n'),
    );
    expect(answer.stderr).toBe('[the stream ended; following again in 0.001 s after cursor 6]\n');
    expect(streams().map((request) => [request.url, request.lastEventId])).toEqual([
      [`${FEED}/stream?after=4`, undefined],
      [`${FEED}/stream`, '6'],
    ]);
    expect(acks()).toEqual(['5', '6', '7']);
    expect(api.authorizations.every((authorization) => authorization === `Bearer ${TOKEN}`)).toBe(true);
  });

  it('reads the feed of a run that has already ended in pages up to now, acknowledging, and exits with its outcome without following', async () => {
    const page = (items: unknown[], nextCursor: string, caughtUp: boolean) => ({ status: 200, body: JSON.stringify({ items, nextCursor, caughtUp }) });
    api.routes[`GET /api/v1/packetade/runs/${RUN}`] = () => ({ status: 200, body: JSON.stringify({ id: RUN, deploymentId: 'dep_1', state: 'succeeded' }) });
    api.routes[`GET ${FEED}?limit=200`] = () => page([event(5, 'run.admitted')], '5', false);
    api.routes[`GET ${FEED}?after=5&limit=200`] = () => page([event(6, 'run.succeeded'), event(7, 'run.admitted', 'run-other')], '7', true);
    const succeeded = await sut(['--ack', '--until-terminal', RUN]);
    api.routes[`GET /api/v1/packetade/runs/${RUN}`] = () => ({ status: 200, body: JSON.stringify({ id: RUN, deploymentId: 'dep_1', state: 'timed_out' }) });
    api.routes[`GET ${FEED}?after=0&limit=200`] = () => page([], '9', true);
    const failed = await sut(['--after', '0', '--until-terminal', RUN]);

    expect(succeeded).toMatchObject({ code: ExitCode.ok, stderr: '' });
    expect(succeeded.stdout).toBe([`5  2026-03-01T12:00:05.000Z  run.admitted  run-${RUN}`, `6  2026-03-01T12:00:06.000Z  run.succeeded  run-${RUN}`, ''].join('\n'));
    expect(acks()).toEqual(['5', '6']);
    expect(failed.code).toBe(AdeExitCode.runNotSucceeded);
    expect(streams()).toEqual([]);
  });

  it('exits 6 when the run ends otherwise, and does not send again a cursor already acknowledged', async () => {
    acknowledged = 6;
    api.routes[`GET ${FEED}/stream?after=0`] = stream(frame(event(5, 'run.admitted')), frame(event(6, 'run.started')), frame(event(7, 'run.budget_exhausted')));

    const answer = await sut(['--after', '0', '--ack', '--until-terminal', RUN]);

    expect(answer.code).toBe(AdeExitCode.runNotSucceeded);
    expect(answer.stderr).toBe(`error: run ${RUN} ended: run.budget_exhausted\n`);
    expect(acks()).toEqual(['7']);
  });

  it('ignores the terminal event of another run, and says why a stream closed before following again', async () => {
    const answers = [
      stream(frame(event(3, 'run.failed', 'run-run_other')), 'event: closing\ndata: {"reason":"shutting_down","detail":"the server is stopping; reconnect from your last cursor","cursor":"3"}\n\n'),
      stream(frame(event(4, 'run.succeeded'))),
    ];
    api.routes[`GET ${FEED}/stream`] = () => answers.shift()!;

    const answer = await sut(['--until-terminal', RUN]);

    expect(answer.code).toBe(ExitCode.ok);
    expect(answer.stdout.split('\n').filter(Boolean).map((line) => line.split('  ')[0])).toEqual(['3', '4']);
    expect(answer.stderr).toBe('[the server closed the stream (shutting_down: the server is stopping; reconnect from your last cursor); following again in 0.001 s after cursor 3]\n');
  });

  it('prints the events themselves with --json, one per line', async () => {
    api.routes[`GET ${FEED}/stream`] = stream(frame(event(9, 'run.succeeded')));

    const answer = await api.cli(['--json', 'ade', 'watch', '--until-terminal', RUN], {}, { PACKETAGENT_ADE_TOKEN: TOKEN });

    expect(answer.code).toBe(ExitCode.ok);
    expect(answer.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as unknown)).toEqual([event(9, 'run.succeeded')]);
  });

  it('stops cleanly on a signal: exit 0 when following, 130 or 143 when it was waiting for a run to end', async () => {
    api.routes[`GET ${FEED}/stream`] = { ...stream(frame(event(5, 'run.admitted'))), open: true };
    for (const [argv, signal, code] of [
      [['--ack'], 'SIGINT', ExitCode.ok],
      [['--until-terminal', RUN], 'SIGINT', 130],
      [['--until-terminal', RUN], 'SIGTERM', 143],
    ] as const) {
      api.seen.length = 0;
      api.headers.length = 0;
      let interrupt: ((signal: StopSignal) => void) | null = null;
      let unsubscribed = false;
      const running = sut([...argv], {
        onSignal: (handler: (signal: StopSignal) => void) => {
          interrupt = handler;
          return () => (unsubscribed = true);
        },
      });
      await eventually(() => streams().length === 1 && interrupt !== null, { intervalMs: 5, what: 'the stream to be open' });
      if (argv[0] === '--ack') await eventually(() => acks().includes('5'), { intervalMs: 5, what: 'the event to be acknowledged' });
      interrupt!(signal);
      const answer = await running;

      expect({ signal, code: answer.code, unsubscribed }).toEqual({ signal, code, unsubscribed: true });
      expect(streams()).toHaveLength(1);
      if (code !== ExitCode.ok) expect(answer.stderr).toBe(`error: stopped by ${signal} before run ${RUN} ended\n`);
    }
  });

  it('does not follow again after a refusal: exits 3 for a token the server refuses', async () => {
    api.json('GET', `${FEED}/stream`, 401, { title: 'Unauthorized', status: 401, code: 'actor_token_invalid', detail: 'the actor token has been revoked' });

    const answer = await sut([]);

    expect(answer).toEqual({ code: ExitCode.auth, stdout: '', stderr: 'error: actor_token_invalid: the actor token has been revoked\n' });
    expect(streams()).toHaveLength(1);
  });

  it('follows again after a 503, waiting longer each time, and leaves a cursor another client acknowledged further alone', async () => {
    const answers = [
      stream(),
      { status: 503, body: JSON.stringify({ title: 'Service Unavailable', status: 503, code: 'unavailable', detail: 'try again' }) },
      stream(frame(event(5, 'run.admitted')), frame(event(6, 'run.succeeded'))),
    ];
    api.routes[`GET ${FEED}/stream`] = () => answers.shift()!;
    const acknowledge = api.routes[`POST ${FEED}/ack`] as (request: SeenRequest) => { status: number; body: string };
    api.routes[`POST ${FEED}/ack`] = (request) => {
      // Another watcher of the same actor moves the cursor past 5 just before this one acknowledges it.
      if ((JSON.parse(request.body) as { cursor: string }).cursor === '5') acknowledged = 50;
      return acknowledge(request);
    };

    const answer = await sut(['--ack', '--until-terminal', RUN]);

    expect(answer.code).toBe(ExitCode.ok);
    expect(answer.stderr).toBe(
      [
        '[the stream ended; following again in 0.001 s from the acknowledged cursor]',
        '[unavailable: try again; following again in 0.002 s from the acknowledged cursor]',
        '[cursor 5 not acknowledged: another client of this actor acknowledged 50 already]',
        '',
      ].join('\n'),
    );
    expect(acks()).toEqual(['5']);
    expect(acknowledged).toBe(50);
  });

  it('refuses a cursor that is not one before connecting', async () => {
    const answer = await sut(['--after', '-1']);

    expect(answer.code).toBe(ExitCode.failure);
    expect(answer.stderr).toMatch(/--after <cursor>' argument '-1' is invalid/);
    expect(api.seen).toEqual([]);
  });
});

describe(reconnectDelayMs.name, () => {
  it("starts at the server's retry, doubles with each failure in a row, and stops growing at the cap", () => {
    expect([0, 1, 2, 3, 4, 5, 40].map((failures) => reconnectDelayMs(failures, 2_000))).toEqual([2_000, 4_000, 8_000, 16_000, MAX_RECONNECT_DELAY_MS, MAX_RECONNECT_DELAY_MS, MAX_RECONNECT_DELAY_MS]);
    expect(reconnectDelayMs(0, 0)).toBe(1);
  });
});

describe(endsRun.name, () => {
  it("is true only for a terminal run event on that run's own stream", () => {
    expect(endsRun(RUN, event(1, 'run.succeeded'))).toBe(true);
    expect(endsRun(RUN, event(1, 'run.timed_out'))).toBe(true);
    expect(endsRun(RUN, event(1, 'run.waiting'))).toBe(false);
    expect(endsRun(RUN, event(1, 'run.succeeded', 'run-run_10'))).toBe(false);
  });
});

describe(eventLine.name, () => {
  it('is cursor, time, type and stream', () => {
    expect(eventLine('12', event(2, 'deployment.paused', 'deployment-dep_1'))).toBe('12  2026-03-01T12:00:02.000Z  deployment.paused  deployment-dep_1');
  });
});
