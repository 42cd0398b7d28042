import { ChangeDetectionStrategy, Component, computed, input } from '@angular/core';
import { runStateTone, type Tone } from './format';

@Component({
  selector: 'pa-badge',
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: `<span class="badge" [class]="'badge ' + tone()">{{ text() }}</span>`,
})
export class BadgeComponent {
  readonly text = input.required<string>();
  /** A tone, or none to colour the text as a run state. */
  readonly kind = input<Tone | null>(null);
  protected readonly tone = computed(() => this.kind() ?? runStateTone(this.text()));
}
