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
