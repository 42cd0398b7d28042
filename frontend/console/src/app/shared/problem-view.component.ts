import { ChangeDetectionStrategy, Component, computed, input } from '@angular/core';
import type { Problem } from './problem';

/** The answer of a failed change (a form submit): title, detail and every issue with its path. */
@Component({
  selector: 'pa-problem',
  changeDetection: ChangeDetectionStrategy.OnPush,
  template: `
    @if (problem(); as p) {
      <div class="state error" role="alert">
        <p><strong>{{ p.title }}</strong>@if (p.detail) {: {{ p.detail }}}</p>
        @if (unplaced().length) {
          <ul>
            @for (issue of unplaced(); track $index) {
              <li><code>{{ issue.path || '(document)' }}</code>: {{ issue.message }}</li>
            }
          </ul>
        }
      </div>
    }
  `,
})
export class ProblemViewComponent {
  readonly problem = input<Problem | null>(null);
  /** Paths a form shows next to their fields; the rest are listed here. */
  readonly placed = input<readonly string[]>([]);
  protected readonly unplaced = computed(() => (this.problem()?.errors ?? []).filter((issue) => !this.placed().includes(issue.path)));
}
