export interface Summary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export function summarise(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? Number.NaN };
}

export const now = (): number => performance.timeOrigin + performance.now();

export function ratio(ours: number, baseline: number): string {
  return baseline > 0 ? `${(ours / baseline).toFixed(2)}x` : 'n/a';
}

export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((row) => row.map((cell) => (typeof cell === 'number' ? formatNumber(cell) : cell)))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => String(row[i]).length)));
  const line = (row: (string | number)[]) => row.map((cell, i) => String(cell).padEnd(widths[i]!)).join('  ');
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (Number.isInteger(value)) return String(value);
  return value >= 100 ? Math.round(value).toString() : value.toFixed(2);
}

export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Polls until `done()`; a benchmark that stops making progress fails instead of hanging. */
export async function until(done: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`benchmark stalled waiting for ${what}`);
    await sleep(5);
  }
}

/** Calls `fire(k)` at `rate` per second for `count` operations, with at most `maxInFlight` pending. */
export async function paced(count: number, rate: number, maxInFlight: number, fire: (k: number) => Promise<void>): Promise<void> {
  const start = now();
  const inFlight = new Set<Promise<void>>();
  for (let k = 0; k < count; k++) {
    const wait = start + (k * 1_000) / rate - now();
    if (wait > 0) await sleep(wait);
    while (inFlight.size >= maxInFlight) await Promise.race(inFlight);
    const p = fire(k).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
}
