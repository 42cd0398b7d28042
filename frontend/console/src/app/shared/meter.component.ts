import { ChangeDetectionStrategy, Component, computed, input } from '@angular/core';

/** A labelled progress bar: used of limit, warning from 80 % and bad at the limit. */
@Component({
  selector: 'pa-meter',
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `
    :host { display: block; min-width: 0; }
    .head { display: flex; justify-content: space-between; gap: 0.5rem; font-size: 0.85rem; }
    .label { font-weight: 600; }
    .text { color: var(--muted); text-align: right; }
    .track { height: 0.55rem; background: #e6e9ed; border-radius: 999px; overflow: hidden; margin-top: 0.2rem; }
    .fill { height: 100%; background: var(--accent); border-radius: 999px; }
    .fill.warn { background: var(--warn); }
    .fill.bad { background: var(--bad); }
    .track.unbounded .fill { background: repeating-linear-gradient(90deg, #8c959f 0 6px, #c6ccd2 6px 12px); width: 100%; }
  `,
  template: `
    <div class="head"><span class="label" [id]="id()">{{ label() }}</span><span class="text">{{ text() }}</span></div>
    @if (ratio() === null) {
      <div class="track unbounded" role="img" [attr.aria-labelledby]="id()" [attr.aria-label]="label() + ': ' + text()"><div class="fill"></div></div>
    } @else {
      <div
        class="track"
        role="progressbar"
        [attr.aria-labelledby]="id()"
        aria-valuemin="0"
        aria-valuemax="100"
        [attr.aria-valuenow]="percent()"
        [attr.aria-valuetext]="text()"
      ><div class="fill" [class.warn]="tone() === 'warn'" [class.bad]="tone() === 'bad'" [style.width.%]="percent()"></div></div>
    }
  `,
})
export class MeterComponent {
  readonly label = input.required<string>();
  readonly text = input.required<string>();
  /** 0..1, or null when nothing limits it. */
  readonly ratio = input<number | null>(null);
  private static next = 0;
  protected readonly id = computed(() => `meter-${this.serial}`);
  private readonly serial = ++MeterComponent.next;
  protected readonly percent = computed(() => Math.round((this.ratio() ?? 0) * 100));
  protected readonly tone = computed(() => ((this.ratio() ?? 0) >= 1 ? 'bad' : (this.ratio() ?? 0) >= 0.8 ? 'warn' : 'ok'));
}
