import { ChangeDetectionStrategy, Component, computed, input } from '@angular/core';
import { formatUsd } from '../../shared/format';
import { formatSeconds } from './run-meters';
import type { Waterfall } from './waterfall';

/** A run's steps as a waterfall of durations: one row per span on the run's time axis, with cost. */
@Component({
  selector: 'pa-waterfall',
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `
    ol { list-style: none; margin: 0; padding: 0; }
    li { display: grid; grid-template-columns: minmax(8rem, 16rem) 1fr 5.5rem; gap: 0.5rem; align-items: center; padding: 0.2rem 0; border-bottom: 1px solid #eef0f2; font-size: 0.85rem; }
    .name { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
    .lane { position: relative; height: 0.9rem; background: #f6f8fa; border-radius: 3px; }
    .bar { position: absolute; top: 0; bottom: 0; min-width: 2px; border-radius: 3px; }
    .bar.queue { background: #8c959f; }
    .bar.model { background: var(--accent); }
    .bar.tool { background: var(--ok); }
    .bar.wait { background: repeating-linear-gradient(45deg, #d4a72c 0 5px, #f2d27a 5px 10px); }
    .bar.open { opacity: 0.7; }
    .figures { text-align: right; color: var(--muted); font-variant-numeric: tabular-nums; }
    .legend { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; font-size: 0.8rem; color: var(--muted); margin: 0 0 0.5rem; padding: 0; list-style: none; }
    .legend li { display: inline-flex; border: 0; padding: 0; gap: 0.35rem; grid-template-columns: none; }
    .swatch { display: inline-block; width: 0.8rem; height: 0.8rem; border-radius: 2px; vertical-align: middle; }
    @media (max-width: 640px) {
      li { grid-template-columns: 1fr 4.5rem; }
      .lane { grid-column: 1 / -1; grid-row: 2; }
    }
  `,
  template: `
    @if (of().spans.length === 0) {
      <p class="state">No steps yet.</p>
    } @else {
      <ul class="legend" aria-hidden="true">
        <li><span class="swatch bar queue"></span>queued</li>
        <li><span class="swatch bar model"></span>model call</li>
        <li><span class="swatch bar tool"></span>tool call</li>
        <li><span class="swatch bar wait"></span>approval or other wait</li>
      </ul>
      <ol [attr.aria-label]="'Run steps over ' + seconds(total() / 1000)">
        @for (s of of().spans; track s.key) {
          <li>
            <span class="name" [title]="s.label">{{ s.label }}</span>
            <span class="lane" aria-hidden="true"><span class="bar" [class]="'bar ' + s.kind + (s.open ? ' open' : '')" [style.left.%]="left(s.startMs)" [style.width.%]="width(s.startMs, s.endMs)"></span></span>
            <span class="figures">{{ seconds((s.endMs - s.startMs) / 1000) }}@if (s.open) {+}@if (s.costUsd !== null) {<br />{{ usd(s.costUsd) }}}</span>
          </li>
        }
      </ol>
    }
  `,
})
export class WaterfallComponent {
  readonly of = input.required<Waterfall>();
  protected readonly total = computed(() => Math.max(1, this.of().endMs - this.of().startMs));
  protected readonly usd = formatUsd;
  protected readonly seconds = (s: number) => (s < 60 ? `${s.toFixed(s < 10 ? 1 : 0)} s` : formatSeconds(s));
  protected left(startMs: number): number {
    return ((startMs - this.of().startMs) / this.total()) * 100;
  }
  protected width(startMs: number, endMs: number): number {
    return Math.min(100 - this.left(startMs), ((endMs - startMs) / this.total()) * 100);
  }
}
