import { ChangeDetectionStrategy, Component, input } from '@angular/core';
import type { Named } from './names';

/** A name in place of an id; the id is the tooltip, and shows itself when no name is known. */
@Component({
  selector: 'pa-name',
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `:host { overflow-wrap: anywhere; } .id { color: var(--muted); font-size: 0.8em; }`,
  template: `
    @if (of().known) {
      <span [title]="of().id">{{ of().label }}</span>@if (showId()) { <code class="id"> {{ short(of().id) }}</code> }
    } @else {
      <code [title]="of().id">{{ of().label }}</code>
    }
  `,
})
export class NameComponent {
  readonly of = input.required<Named>();
  /** Show a shortened id after the name as a secondary detail (pages about one thing). */
  readonly showId = input(false);
  protected short(id: string): string {
    return id.length > 14 ? `${id.slice(0, 12)}…` : id;
  }
}
