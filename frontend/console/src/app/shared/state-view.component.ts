import { ChangeDetectionStrategy, Component, computed, input } from '@angular/core';
import type { Loadable } from './loadable';
import { describeProblem } from './problem';

/**
 * Loading, error and empty states for a Loadable; the projected content is shown when it is
 * ready and not empty (guard it with `@if (x.value(); as v)`, projected content is created eagerly).
 */
@Component({
  selector: 'pa-state',
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: `
    @switch (of().status()) {
      @case ('loading') {
        <p class="state" role="status">Loading {{ what() }}…</p>
      }
      @case ('error') {
        <div class="state error" role="alert">
          <p>Could not load {{ what() }}: {{ message() }}</p>
          @if (of().problem()?.code; as code) {
            <p class="hint">Code: <code>{{ code }}</code></p>
          }
          <button type="button" class="secondary" (click)="of().reload()">Try again</button>
        </div>
      }
      @default {
        @if (empty()) {
          <p class="state">{{ emptyText() }}</p>
        } @else {
          <ng-content />
        }
      }
    }
  `,
})
export class StateViewComponent {
  readonly of = input.required<Loadable<unknown>>();
  readonly what = input('this');
  readonly route = input<string | undefined>(undefined);
  readonly empty = input(false);
  readonly emptyText = input('Nothing here yet.');
  protected readonly message = computed(() => {
    const problem = this.of().problem();
    return problem ? describeProblem(problem, this.route()) : '';
  });
}
