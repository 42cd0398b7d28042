/** Geometry of the overview's trend charts: plain numbers in, SVG coordinates out; pure, so unit tested. */

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A round axis maximum at or above the largest value (1, 2, 5 × 10ⁿ), never zero. */
export function niceMax(values: readonly number[]): number {
  const max = Math.max(0, ...values.filter(Number.isFinite));
  if (max <= 0) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (max <= step * magnitude) return step * magnitude;
  return 10 * magnitude;
}

/**
 * Stacked bars, one column per bucket: `series[s][i]` is series s in bucket i, stacked bottom
 * up in series order, within a plot `width` × `height` (y grows downwards, as in SVG).
 */
export function stackedBars(series: readonly (readonly number[])[], max: number, width: number, height: number, gapRatio = 0.25): Rect[][] {
  const buckets = Math.max(0, ...series.map((values) => values.length));
  if (buckets === 0) return series.map(() => []);
  const slot = width / buckets;
  const barWidth = slot * (1 - gapRatio);
  const base = new Array<number>(buckets).fill(0);
  return series.map((values) =>
    values.map((value, i) => {
      const h = max > 0 ? (Math.max(0, value) / max) * height : 0;
      const rect = { x: i * slot + (slot - barWidth) / 2, y: height - base[i]! - h, width: barWidth, height: h };
      base[i]! += h;
      return rect;
    }),
  );
}

/** A polyline's points through the middle of each bucket. */
export function linePoints(values: readonly number[], max: number, width: number, height: number): string {
  if (values.length === 0) return '';
  const slot = width / values.length;
  return values.map((value, i) => `${round(i * slot + slot / 2)},${round(height - (max > 0 ? (Math.max(0, value) / max) * height : 0))}`).join(' ');
}

/** Labels for a few buckets along the axis: the hour ("14:00") or the day ("Nov 30"), UTC. */
export function axisLabels(starts: readonly string[], bucket: 'hour' | 'day', count = 4): Array<{ index: number; text: string }> {
  if (starts.length === 0) return [];
  const every = Math.max(1, Math.ceil(starts.length / count));
  const labels: Array<{ index: number; text: string }> = [];
  for (let i = starts.length - 1; i >= 0; i -= every) labels.unshift({ index: i, text: bucketLabel(starts[i]!, bucket) });
  return labels;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

export function bucketLabel(start: string, bucket: 'hour' | 'day'): string {
  const date = new Date(start);
  if (Number.isNaN(date.getTime())) return start;
  return bucket === 'hour' ? `${String(date.getUTCHours()).padStart(2, '0')}:00` : `${MONTHS[date.getUTCMonth()]} ${date.getUTCDate()}`;
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
