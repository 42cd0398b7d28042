import { ChangeDetectionStrategy, Component, inject, input, output, signal } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { RouterLink } from '@angular/router';
import { ApiClient, problemOf } from '../../core/api';
import { Directory } from '../../core/directory';
import { Session } from '../../core/session';
import { countdown, formatTime, prettyJson } from '../../shared/format';
import { NameComponent } from '../../shared/name.component';
import type { Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { budgetRequestOf, quorumText, type Attention } from '../approvals/attention-facts';

/** The approval a waiting run needs, answered on the run page: approve once or for the run, or reject with a reason. */
@Component({
  selector: 'pa-run-approval',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, RouterLink, ProblemViewComponent, NameComponent],
  styles: `
    section { border-left: 3px solid var(--warn); padding: 0.25rem 0.75rem; margin: 0.75rem 0; }
    h2 { margin-top: 0.25rem; }
    .reject { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; }
    .reject input { flex: 1 1 12rem; }
    pre { max-height: 10rem; }
  `,
  template: `
    @let a = attention();
    <section aria-labelledby="approval-heading" data-testid="run-approval">
      <h2 id="approval-heading">Needs approval: {{ a.tool }}{{ a.verb ? ' ' + a.verb : '' }}{{ a.resource ? ' on ' + a.resource : '' }}</h2>
      <p class="hint">
        Asked {{ time(a.createdAt) }} by <pa-name [of]="directory.names().actor(a.requester)" />; {{ left(a.deadline) }}.
        @if (quorum(); as q) { {{ q }}. }
        <a [routerLink]="['/w', ws(), 'approvals']">Edit its arguments on the Approvals page</a>.
      </p>
      @if (!budget()) {
        <details>
          <summary>Arguments (as recorded, secrets redacted)</summary>
          <pre tabindex="0">{{ json(a.arguments) }}</pre>
        </details>
      }
      @if (session.can('approve')) {
        <div class="actions">
          <button type="button" (click)="answer('approve', { scope: 'once' }, 'Approved once.')" [disabled]="busy()">Approve once</button>
          <button type="button" class="secondary" (click)="answer('approve', { scope: 'run' }, 'Approved for the rest of this run.')" [disabled]="busy()">Approve for this run</button>
        </div>
        <form class="reject" (ngSubmit)="answer('reject', { reason: reason.trim() }, 'Rejected.')" aria-label="Reject this request">
          <label class="visually-hidden" for="run-reject-reason">Reason for rejecting</label>
          <input id="run-reject-reason" name="rejectReason" placeholder="reason for rejecting (required)" [(ngModel)]="reason" />
          <button type="submit" class="danger" [disabled]="busy() || !reason.trim()">Reject</button>
        </form>
      } @else {
        <p class="hint">Answering needs the approve permission in this workspace.</p>
      }
      <pa-problem [problem]="problem()" />
      @if (done(); as text) { <p role="status">{{ text }}</p> }
    </section>
  `,
})
export class RunApprovalComponent {
  private readonly api = inject(ApiClient);
  protected readonly session = inject(Session);
  protected readonly directory = inject(Directory);
  readonly attention = input.required<Attention>();
  readonly ws = input.required<string | null>();
  readonly answered = output<void>();
  protected readonly busy = signal(false);
  protected readonly problem = signal<Problem | null>(null);
  protected readonly done = signal<string | null>(null);
  protected reason = '';
  protected readonly time = formatTime;
  protected readonly json = prettyJson;
  protected budget = () => budgetRequestOf(this.attention().arguments);
  protected quorum = () => quorumText(this.attention().rules, this.attention().approvals);
  protected left(deadline: string): string {
    return countdown(deadline, Date.now()).text;
  }

  protected async answer(action: 'approve' | 'reject', body: unknown, done: string): Promise<void> {
    this.busy.set(true);
    this.problem.set(null);
    try {
      const answer = await this.api.post<Attention>(`/api/v1/workspaces/${this.ws()}/attention/${encodeURIComponent(this.attention().id)}/${action}`, body);
      const progress = action === 'approve' && answer?.state === 'open' ? quorumText(answer.rules, answer.approvals) : null;
      this.done.set(progress ? `Approval recorded: ${progress}.` : done);
      this.reason = '';
      this.answered.emit();
    } catch (error) {
      this.problem.set(problemOf(error));
    } finally {
      this.busy.set(false);
    }
  }
}
