import { ChangeDetectionStrategy, Component, computed, input } from '@angular/core';
import { axisLabels, linePoints, niceMax, stackedBars } from './trend-geometry';

export interface TrendSeries {
  label: string;
  /** A CSS colour (a custom property of styles.css). */
  colour: string;
  values: readonly number[];
  /** Drawn as a line over the bars rather than as a stacked bar. */
  line?: boolean;
}

const WIDTH = 600;
const HEIGHT = 160;
const LEFT = 44;
const BOTTOM = 20;
/** Room for the last axis label, centred on the last bucket, to overhang the plot. */
const RIGHT = 18;

/** A small SVG chart of stacked bars and lines per time bucket, with its figures as a table for screen readers. */
@Component({
  selector: 'pa-trend-chart',
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `
    :host { display: block; min-width: 0; }
    figure { margin: 0; }
    svg { width: 100%; height: auto; display: block; }
    .axis { font-size: 11px; fill: var(--muted); }
    .grid { stroke: #e6e9ed; stroke-width: 1; }
    .legend { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; font-size: 0.8rem; color: var(--muted); list-style: none; padding: 0; margin: 0.25rem 0 0; }
    .swatch { display: inline-block; width: 0.75rem; height: 0.75rem; border-radius: 2px; margin-right: 0.3rem; vertical-align: -1px; }
    figcaption { font-weight: 600; margin-bottom: 0.25rem; }
  `,
  template: `
    <figure>
      <figcaption>{{ caption() }}</figcaption>
      <svg [attr.viewBox]="'0 0 ' + width + ' ' + (height + bottom)" role="img" [attr.aria-label]="summary()">
        <g [attr.transform]="'translate(' + left + ',0)'">
          <line class="grid" x1="0" [attr.x2]="plot" y1="0.5" y2="0.5" />
          <line class="grid" x1="0" [attr.x2]="plot" [attr.y1]="height / 2" [attr.y2]="height / 2" />
          <line class="grid" x1="0" [attr.x2]="plot" [attr.y1]="height - 0.5" [attr.y2]="height - 0.5" />
          @for (bars of barRects(); track $index) {
            @for (r of bars.rects; track $index) {
              @if (r.height > 0) { <rect [attr.x]="r.x" [attr.y]="r.y" [attr.width]="r.width" [attr.height]="r.height" [attr.fill]="bars.colour" rx="1.5" /> }
            }
          }
          @for (l of lines(); track l.label) {
            <polyline [attr.points]="l.points" fill="none" [attr.stroke]="l.colour" stroke-width="2" stroke-linejoin="round" />
          }
          @for (t of ticks(); track t.index) {
            <text class="axis" [attr.x]="(t.index + 0.5) * slot()" [attr.y]="height + 14" text-anchor="middle">{{ t.text }}</text>
          }
        </g>
        <text class="axis" [attr.x]="left - 6" y="10" text-anchor="end">{{ format()(max()) }}</text>
        <text class="axis" [attr.x]="left - 6" [attr.y]="height" text-anchor="end">0</text>
      </svg>
      <ul class="legend" aria-hidden="true">
        @for (s of series(); track s.label) { <li><span class="swatch" [style.background]="s.colour"></span>{{ s.label }}</li> }
      </ul>
    </figure>
  `,
})
export class TrendChartComponent {
  readonly caption = input.required<string>();
  readonly series = input.required<readonly TrendSeries[]>();
  readonly labels = input.required<readonly string[]>();
  readonly bucket = input<'hour' | 'day'>('hour');
  readonly format = input<(n: number) => string>((n) => String(n));
  protected readonly width = WIDTH;
  protected readonly height = HEIGHT;
  protected readonly left = LEFT;
  protected readonly bottom = BOTTOM;
  protected readonly plot = WIDTH - LEFT - RIGHT;
  protected readonly max = computed(() => {
    const bars = this.series().filter((s) => !s.line);
    const stacked = this.labels().map((_, i) => bars.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
    return niceMax([...stacked, ...this.series().filter((s) => s.line).flatMap((s) => s.values)]);
  });
  protected readonly slot = computed(() => this.plot / Math.max(1, this.labels().length));
  protected readonly barRects = computed(() => {
    const bars = this.series().filter((s) => !s.line);
    const rects = stackedBars(bars.map((s) => s.values), this.max(), this.plot, HEIGHT);
    return bars.map((s, i) => ({ colour: s.colour, rects: rects[i] ?? [] }));
  });
  protected readonly lines = computed(() =>
    this.series()
      .filter((s) => s.line)
      .map((s) => ({ label: s.label, colour: s.colour, points: linePoints(s.values, this.max(), this.plot, HEIGHT) })),
  );
  protected readonly ticks = computed(() => axisLabels(this.labels(), this.bucket()));
  protected readonly summary = computed(() => {
    const totals = this.series().map((s) => `${s.label} ${this.format()(s.values.reduce((sum, v) => sum + v, 0))}`);
    return `${this.caption()}: ${totals.join(', ')} over ${this.labels().length} ${this.bucket() === 'hour' ? 'hours' : 'days'}`;
  });
}
