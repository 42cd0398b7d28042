/**
 * Network hops of a run from its claim to its first model call: the SQL statements the app sent
 * (seen by the Postgres proxy) and the NATS messages it sent (seen by the tap), counted per run
 * in a window and grouped by what they are.
 */
import type { NatsMessage, NatsTap } from './nats-tap';
import type { PgStatement } from './pg-proxy';
import { summarise, type Summary } from './stats';

export interface HopKind {
  channel: 'sql' | 'nats';
  /** Who sent it (for SQL; see OWNERS), and whether the run waits for it. */
  owner: string;
  onPath: boolean;
  /** What the statement or message is, e.g. "append to run-: run.claimed + run.started" or "command scheduler.timers.set". */
  kind: string;
  /** Mean per run in the window. */
  perRun: number;
  /** One instance's SQL text or subject, shortened. */
  example: string;
}

export interface HopWindow {
  /** The window's length per run, in ms. */
  ms: Summary & { mean: number };
  /** Mean per run: every 'Q' and 'E' the app sent. */
  sqlStatements: number;
  /** Mean per run: those the run waits for (the supervisor's, and those of the services serving its requests). */
  sqlOnPath: number;
  /** Mean per run by owner (OWNERS labels). */
  sqlByOwner: Record<string, number>;
  /** Mean per run: requests on the command subjects (`<prefix>.pa.cmd.>`). */
  commandRequests: number;
  /** Mean per run, counted apart from the commands: JetStream API requests (pulls, reads), acks, publishes to the events stream, writes to the command-results bucket. */
  jetstream: { api: number; acks: number; eventPublishes: number; kvWrites: number };
  kinds: HopKind[];
}

/** Where one run's windows begin and end, in epoch ms of the benchmark's clock. */
export interface RunMarks {
  runId: string;
  /** The claim: the INSERT INTO supervisor.runs for the run (the wake's first statement). */
  wakeAt: number;
  /** The append that carries run.claimed. */
  claimAt: number;
  /** The first model call's start: the first hop after it less the call's durationMs. */
  modelAt: number;
}

const APPEND_MANY = /pa_append_events\(/;
const APPEND_ONE = /INSERT INTO events\b/;

/** The stream and event types of an event-store append, or null for any other statement. */
export function appended(statement: PgStatement): { stream: string; types: string[] } | null {
  if (statement.message !== 'E') return null;
  if (APPEND_MANY.test(statement.sql)) {
    let types: string[] = [];
    try {
      types = (JSON.parse(statement.params[5] ?? '[]') as { type: string }[]).map((row) => row.type);
    } catch {
      // Cut at the proxy's parameter limit: the row types still show.
      types = [...(statement.params[5] ?? '').matchAll(/\{"id":"[^"]+","type":"([a-z0-9_.]+)"/g)].map((match) => match[1]!);
    }
    return { stream: statement.params[0] ?? '', types };
  }
  if (APPEND_ONE.test(statement.sql) && statement.params.length >= 11) return { stream: statement.params[1] ?? '', types: [statement.params[3] ?? ''] };
  return null;
}

const oneLine = (sql: string) => sql.replace(/\s+/g, ' ').trim();

/** A statement's kind: appends by stream and event types, reads of a stream by its category, others by verb and table. */
export function statementKind(statement: PgStatement): string {
  const append = appended(statement);
  if (append) return `append to ${append.stream.replace(/-.*$/, '-')}: ${append.types.join(' + ')}`;
  const sql = oneLine(statement.sql);
  const word = /^(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? '?';
  if (['BEGIN', 'COMMIT', 'ROLLBACK', 'LISTEN'].includes(word)) return word;
  if (/^SELECT pg_notify\(/i.test(sql)) return `NOTIFY ${statement.params[0] ?? '?'}`;
  if (/^SELECT \* FROM events WHERE stream_id = \$1/i.test(sql)) return `read stream ${(statement.params[0] ?? '?').replace(/-.*$/, '-')}`;
  if (/^SELECT s\.snap\b/i.test(sql)) return 'read events after the cursor';
  if (/^SELECT min\(global_position\)/i.test(sql)) return 'gap check on events';
  if (/^SELECT pg_advisory_xact_lock/i.test(sql)) return 'SELECT pg_advisory_xact_lock';
  if (/clock_timestamp\(\)/i.test(sql) && !/\bFROM\b/i.test(sql)) return 'SELECT clock_timestamp()';
  const body = sql.replace(/^WITH .*?\)\s*(?=(SELECT|INSERT|UPDATE|DELETE)\b)/i, '');
  const verb = /^(\w+)/.exec(body)?.[1]?.toUpperCase() ?? word;
  const table =
    verb === 'INSERT' ? /^INSERT INTO ([\w.]+)/i.exec(body)?.[1] : verb === 'UPDATE' ? /^UPDATE ([\w.]+)/i.exec(body)?.[1] : verb === 'DELETE' ? /^DELETE FROM ([\w.]+)/i.exec(body)?.[1] : /\bFROM ([\w.]+)/i.exec(body)?.[1];
  const locking = /\bFOR (UPDATE|SHARE)\b/i.exec(body)?.[0]?.toUpperCase();
  return table ? `${verb} ${table}${locking ? ` ${locking}` : ''}` : sql.slice(0, 60);
}

/**
 * Who sent a statement and whether the run waits for it. The run's path is what the
 * supervisor itself sends and what the services it asks do before they answer; the rest goes on
 * beside it (reading events the run wrote, sweeps, polls) or is not awaited (the doorbells).
 */
export const OWNERS = {
  supervisor: { label: 'supervisor (the run)', path: true },
  timers: { label: 'scheduler serving scheduler.timers.set', path: true },
  reserve: { label: 'budget serving budget.reserve', path: true },
  doorbell: { label: 'doorbell after a commit (not awaited)', path: false },
  relay: { label: 'relay', path: false },
  projector: { label: 'projector', path: false },
  intake: { label: 'intake (run progress)', path: false },
  policy: { label: 'policy (learning the run)', path: false },
  budgetRun: { label: 'budget (learning the run)', path: false },
  budgetSweep: { label: 'budget (expiring reservations)', path: false },
  schedulerPoll: { label: 'scheduler (due timers and schedules)', path: false },
  sweeps: { label: 'supervisor sweeps (recovery, leases, watchdog)', path: false },
  other: { label: 'other', path: false },
} as const;
export type Owner = keyof typeof OWNERS;

/** The budget's timer that expires lapsed holds, apart from the reservations it serves. */
const EXPIRY_SWEEP = /FROM budget\.reservations WHERE state = 'held' AND expires_at <=/;

/** The owner of a statement by itself; a transaction's statements take the owner of the whole (see attribute). */
function ownerOf(statement: PgStatement): Owner {
  const sql = oneLine(statement.sql);
  const append = appended(statement);
  if (/^\s*SELECT pg_notify\(/i.test(sql)) return 'doorbell';
  if (/INSERT INTO supervisor\.runs\b/.test(sql)) return 'supervisor';
  if (/^\s*SELECT \* FROM events WHERE stream_id = \$1/i.test(sql) && /^runctl-|^run-/.test(statement.params[0] ?? '')) return 'supervisor';
  if (/eventstore\.payloads/.test(sql) || append?.stream.startsWith('run-')) return 'supervisor';
  if (/supervisor\./.test(sql)) return 'sweeps';
  if (/relay_cursors|^\s*SELECT s\.snap\b/i.test(sql)) return 'relay';
  if (EXPIRY_SWEEP.test(sql)) return 'budgetSweep';
  if (/budget\.reservations/.test(sql)) return 'reserve';
  if (/scheduler\./.test(sql)) return 'schedulerPoll';
  if (/projector\./.test(sql)) return 'projector';
  if (/intake\./.test(sql)) return 'intake';
  if (/policy\./.test(sql)) return 'policy';
  if (/budget\./.test(sql)) return 'budgetRun';
  return 'other';
}

/** The owner of a transaction, from what it holds. */
function transactionOwner(statements: PgStatement[]): Owner {
  const has = (pattern: RegExp) => statements.some((statement) => pattern.test(oneLine(statement.sql)));
  if (has(EXPIRY_SWEEP)) return 'budgetSweep';
  if (has(/budget\.reservations/)) return 'reserve';
  if (has(/INSERT INTO scheduler\.timers|FROM scheduler\.timers WHERE timer_id/) || statements.some((statement) => appended(statement)?.stream.startsWith('timer-'))) return 'timers';
  if (has(/projector\./)) return 'projector';
  if (has(/intake\.runs/)) return 'intake';
  if (has(/budget\.runs/)) return 'budgetRun';
  if (has(/policy\./)) return 'policy';
  const inner = statements.find((statement) => !/^\s*(BEGIN|COMMIT|ROLLBACK)\b/i.test(statement.sql));
  return inner ? ownerOf(inner) : 'other';
}

export interface AttributedStatement extends PgStatement {
  kind: string;
  owner: Owner;
}

/** Kinds and owners of every statement; BEGIN to COMMIT on one connection is one transaction with one owner. */
export function attribute(statements: readonly PgStatement[]): AttributedStatement[] {
  const out: AttributedStatement[] = statements.map((statement) => ({ ...statement, kind: statementKind(statement), owner: ownerOf(statement) }));
  const open = new Map<number, AttributedStatement[]>();
  for (const statement of out) {
    const word = /^\s*(\w+)/.exec(statement.sql)?.[1]?.toUpperCase();
    if (word === 'BEGIN') {
      open.set(statement.connection, [statement]);
      continue;
    }
    const transaction = open.get(statement.connection);
    if (!transaction) continue;
    transaction.push(statement);
    if (word === 'COMMIT' || word === 'ROLLBACK') {
      const owner = transactionOwner(transaction);
      for (const member of transaction) member.owner = owner;
      open.delete(statement.connection);
    }
  }
  return out;
}

/** A message's kind: the command's name, or what JetStream was asked and of which consumer. */
export function messageKind(message: NatsMessage, tap: Pick<NatsTap, 'commandName'>): string {
  switch (message.kind) {
    case 'command':
      return `command ${tap.commandName(message.subject)}`;
    case 'jetstream-api': {
      const next = /^\$JS\.API\.CONSUMER\.MSG\.NEXT\.[^.]+\.(.+)$/.exec(message.subject);
      if (next) return `JetStream pull (${next[1]})`;
      return `JetStream API ${message.subject.replace(/^\$JS\.API\./, '').replace(/\.[A-Z0-9_]+_PA_[A-Z_]+/, '')}`;
    }
    case 'jetstream-ack': {
      const consumer = /^\$JS\.ACK\.[^.]+\.([^.]+)\./.exec(message.subject)?.[1] ?? '?';
      return `JetStream ack (${consumer})`;
    }
    case 'event-publish':
      return `publish to the events stream (relay): ${message.subject.split('.').slice(-2).join('.')}`;
    case 'kv-write':
      return 'command-results bucket write';
  }
}

function mean(values: number[]): number {
  return values.length ? values.reduce((sum, value) => sum + value, 0) / values.length : Number.NaN;
}

const OWNER_ORDER: string[] = [...Object.values(OWNERS).map((owner) => owner.label), 'command request', 'JetStream'];

/** SQL before NATS, the run's path first, then by owner and by count. */
export function byKindOrder(a: HopKind, b: HopKind): number {
  if (a.channel !== b.channel) return a.channel === 'sql' ? -1 : 1;
  if (a.owner !== b.owner) return OWNER_ORDER.indexOf(a.owner) - OWNER_ORDER.indexOf(b.owner);
  return b.perRun - a.perRun || a.kind.localeCompare(b.kind);
}

/** Every statement and message in [from(run), modelAt) of each run, per run on average. */
export function countWindow(
  runs: RunMarks[],
  from: (run: RunMarks) => number,
  statements: readonly AttributedStatement[],
  messages: readonly NatsMessage[],
  tap: Pick<NatsTap, 'commandName'>,
): HopWindow {
  const kinds = new Map<string, Omit<HopKind, 'perRun'> & { count: number }>();
  const add = (entry: Omit<HopKind, 'perRun'>) => {
    const key = `${entry.channel}|${entry.owner}|${entry.kind}`;
    const found = kinds.get(key) ?? { ...entry, count: 0 };
    found.count += 1;
    kinds.set(key, found);
  };
  const totals = { sql: 0, sqlOnPath: 0, command: 0, api: 0, acks: 0, publishes: 0, kv: 0 };
  const byOwner: Record<string, number> = {};
  for (const run of runs) {
    const start = from(run);
    for (const statement of statements) {
      if (statement.at < start || statement.at >= run.modelAt) continue;
      const owner = OWNERS[statement.owner];
      totals.sql += 1;
      if (owner.path) totals.sqlOnPath += 1;
      byOwner[owner.label] = (byOwner[owner.label] ?? 0) + 1;
      add({ channel: 'sql', owner: owner.label, onPath: owner.path, kind: statement.kind, example: oneLine(statement.sql).slice(0, 160) });
    }
    for (const message of messages) {
      if (message.at < start || message.at >= run.modelAt) continue;
      if (message.kind === 'command') totals.command += 1;
      else if (message.kind === 'jetstream-api') totals.api += 1;
      else if (message.kind === 'jetstream-ack') totals.acks += 1;
      else if (message.kind === 'event-publish') totals.publishes += 1;
      else totals.kv += 1;
      const command = message.kind === 'command';
      add({ channel: 'nats', owner: command ? 'command request' : 'JetStream', onPath: command, kind: messageKind(message, tap), example: message.subject });
    }
  }
  const n = runs.length;
  const lengths = runs.map((run) => run.modelAt - from(run));
  return {
    ms: { ...summarise(lengths), mean: mean(lengths) },
    sqlStatements: totals.sql / n,
    sqlOnPath: totals.sqlOnPath / n,
    sqlByOwner: Object.fromEntries(Object.entries(byOwner).map(([owner, count]) => [owner, count / n])),
    commandRequests: totals.command / n,
    jetstream: { api: totals.api / n, acks: totals.acks / n, eventPublishes: totals.publishes / n, kvWrites: totals.kv / n },
    kinds: [...kinds.values()].map(({ count, ...entry }) => ({ ...entry, perRun: count / n })).sort(byKindOrder),
  };
}

/**
 * A run's marks from what the proxy and the tap saw. The first model call ends right before the
 * run's next hop: the append of run.model_turn when the model is free, the budget.settle
 * request when it is priced (after the reservation that came before the call).
 */
export function runMarks(
  runId: string,
  priced: boolean,
  modelDurationMs: number,
  statements: readonly PgStatement[],
  messages: readonly NatsMessage[],
  tap: Pick<NatsTap, 'commandName'>,
): RunMarks {
  const stream = `run-${runId}`;
  const wake = statements.find((s) => s.message === 'E' && /INSERT INTO supervisor\.runs\b/.test(s.sql) && s.params[0] === runId);
  const claim = statements.find((s) => {
    const append = appended(s);
    return append?.stream === stream && append.types.includes('run.claimed');
  });
  if (!wake || !claim) throw new Error(`run ${runId}: the proxy saw ${wake ? '' : 'no claim INSERT INTO supervisor.runs '}${claim ? '' : 'no append of run.claimed'}`);
  let after: number | undefined;
  if (priced) {
    const reserve = messages.find((m) => m.kind === 'command' && m.at >= claim.at && tap.commandName(m.subject) === 'budget.reserve' && m.head.includes(runId));
    if (!reserve) throw new Error(`run ${runId}: no budget.reserve request after its claim`);
    after = messages.find((m) => m.kind === 'command' && m.at > reserve.at && tap.commandName(m.subject) === 'budget.settle')?.at;
  } else {
    after = statements.find((s) => {
      const append = appended(s);
      return s.at > claim.at && append?.stream === stream && append.types.includes('run.model_turn');
    })?.at;
  }
  if (after === undefined) throw new Error(`run ${runId}: nothing seen after its first model call`);
  return { runId, wakeAt: wake.at, claimAt: claim.at, modelAt: after - modelDurationMs };
}

export interface HopVariant {
  pricing: string;
  deployment: 'seen' | 'new';
  runs: number;
  fromClaim: HopWindow;
  fromWake: HopWindow;
}

/** One table per window: every kind by who sent it, then the totals, a column per variant (means per run). */
export function hopTables(variants: readonly HopVariant[]): string {
  const columns = variants.map((v) => `${v.pricing}${v.deployment === 'new' ? ', new deployment' : ''} (${v.runs})`);
  const cell = (value: number | undefined) => (value === undefined ? '' : value.toFixed(2));
  const section = (title: string, pick: (v: HopVariant) => HopWindow): string => {
    const windows = variants.map(pick);
    const rows = new Map<string, HopKind>();
    for (const window of windows) for (const kind of window.kinds) if (!rows.has(`${kind.channel}|${kind.owner}|${kind.kind}`)) rows.set(`${kind.channel}|${kind.owner}|${kind.kind}`, kind);
    const perRun = (window: HopWindow, kind: HopKind) => window.kinds.find((k) => k.channel === kind.channel && k.owner === kind.owner && k.kind === kind.kind)?.perRun;
    const owners = [...new Set(windows.flatMap((window) => Object.keys(window.sqlByOwner)))].sort((a, b) => OWNER_ORDER.indexOf(a) - OWNER_ORDER.indexOf(b));
    const body: string[][] = [
      ...[...rows.values()].sort(byKindOrder).map((kind) => [kind.onPath ? 'yes' : '', kind.owner, kind.kind, ...windows.map((window) => cell(perRun(window, kind)))]),
      ['', '', 'SQL statements, all', ...windows.map((window) => cell(window.sqlStatements))],
      ['', '', 'SQL statements the run waits for', ...windows.map((window) => cell(window.sqlOnPath))],
      ...owners.map((owner) => ['', owner, 'SQL statements', ...windows.map((window) => cell(window.sqlByOwner[owner] ?? 0))]),
      ['', '', 'NATS command requests', ...windows.map((window) => cell(window.commandRequests))],
      ['', '', 'JetStream API requests (pulls)', ...windows.map((window) => cell(window.jetstream.api))],
      ['', '', 'JetStream acks', ...windows.map((window) => cell(window.jetstream.acks))],
      ['', '', 'publishes to the events stream', ...windows.map((window) => cell(window.jetstream.eventPublishes))],
      ['', '', 'command-results bucket writes', ...windows.map((window) => cell(window.jetstream.kvWrites))],
      ['', '', 'window, mean ms (p50)', ...windows.map((window) => `${window.ms.mean.toFixed(2)} (${window.ms.p50.toFixed(1)})`)],
    ];
    const headers = ['on path', 'who', 'what', ...columns];
    const widths = headers.map((header, i) => Math.max(header.length, ...body.map((row) => row[i]!.length)));
    const line = (row: string[]) => row.map((value, i) => (i >= 3 ? value.padStart(widths[i]!) : value.padEnd(widths[i]!))).join('  ');
    return [title, line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
  };
  return [
    section('from the append of run.claimed to the first model call, per run', (v) => v.fromClaim),
    section('from the claim (INSERT INTO supervisor.runs, after the JetStream delivery of run.admitted) to the first model call, per run', (v) => v.fromWake),
  ].join('\n\n');
}
