import { ChangeDetectionStrategy, Component, computed, inject, input, output, signal } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { ApiClient, problemOf } from '../../core/api';
import { Session } from '../../core/session';
import type { Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import type { EndRunResult, ReleaseRunResult, RunSupervision } from './runs.api';

/**
 * A quarantined run: why, and release (replay its history again) or end it as abandoned. What
 * the last of those did stays on show after the run leaves quarantine.
 */
@Component({
  selector: 'pa-run-quarantine',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, ProblemViewComponent],
  styles: `
    section.quarantine { border-left: 3px solid var(--bad); padding: 0.25rem 0.75rem; margin: 0.75rem 0; }
  `,
  template: `
    @if (supervision()?.status === 'quarantined') {
      <section class="quarantine" aria-labelledby="quarantine-heading" data-testid="quarantine">
        <h2 id="quarantine-heading">Quarantined</h2>
        <p>The supervisor could not replay this run's history and does nothing more for it until someone releases or ends it.</p>
        <p data-testid="quarantine-reason"><strong>{{ supervision()!.quarantineReason }}</strong></p>
        @if (canRecover()) {
          <div class="actions">
            <button type="button" (click)="release()" [disabled]="busy()">Release</button>
            <label class="visually-hidden" for="end-reason">Reason for ending the run</label>
            <input id="end-reason" name="endReason" placeholder="reason for ending (required)" [(ngModel)]="endReason" />
            <button type="button" class="danger" (click)="end()" [disabled]="busy() || !endReason.trim()">End run</button>
          </div>
          <p class="hint">Release replays the history again (it is quarantined again if it still cannot be replayed); End records the run as abandoned without replaying it.</p>
        } @else {
          <p class="hint">Releasing or ending it takes the run-recovery permission (admin or owner).</p>
        }
      </section>
    }
    @if (note(); as text) { <p role="status" data-testid="recovery-note">{{ text }}</p> }
    <pa-problem [problem]="problem()" />
  `,
})
export class RunQuarantineComponent {
  private readonly api = inject(ApiClient);
  private readonly session = inject(Session);
  readonly supervision = input.required<RunSupervision | null>();
  /** The run's API path, `/api/v1/workspaces/{ws}/runs/{id}`. */
  readonly runPath = input.required<string>();
  /** The supervision the server answered after a release or an end: the page refreshes the run with it. */
  readonly recovered = output<RunSupervision>();

  // The roles that hold run-recovery in libs/contracts roles.ts; the server checks it on every call.
  protected readonly canRecover = computed(() => ['admin', 'owner'].includes(this.session.workspace()?.role ?? ''));
  protected readonly busy = signal(false);
  protected readonly problem = signal<Problem | null>(null);
  protected readonly note = signal<string | null>(null);
  protected endReason = '';

  protected async release(): Promise<void> {
    await this.recover(async () => {
      const released = await this.api.post<ReleaseRunResult>(`${this.runPath()}/release`, {});
      this.recovered.emit(released);
      switch (released.outcome) {
        case 'resumed':
          return 'Released: the history replayed and the run goes on.';
        case 'pending':
          return 'Released: a supervisor will take the run up shortly.';
        case 'quarantined':
          return `Still quarantined: ${released.quarantineReason ?? 'the history still cannot be replayed'}.`;
      }
    });
  }

  protected async end(): Promise<void> {
    const reason = this.endReason.trim();
    if (!reason) return;
    await this.recover(async () => {
      const ended = await this.api.post<EndRunResult>(`${this.runPath()}/end`, { reason });
      this.recovered.emit(ended);
      this.endReason = '';
      return `Ended as abandoned (quarantined) at event ${ended.endedAtVersion}.`;
    });
  }

  private async recover(action: () => Promise<string>): Promise<void> {
    this.busy.set(true);
    this.problem.set(null);
    this.note.set(null);
    try {
      this.note.set(await action());
    } catch (error) {
      this.problem.set(problemOf(error));
    } finally {
      this.busy.set(false);
    }
  }
}
