import { ChangeDetectionStrategy, Component, DestroyRef, inject, signal, type OnInit } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { RouterLink } from '@angular/router';
import { ApiClient, problemOf } from '../../core/api';
import { Session } from '../../core/session';
import { countdown, formatTime, prettyJson } from '../../shared/format';
import { loadable } from '../../shared/loadable';
import type { Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { StateViewComponent } from '../../shared/state-view.component';

export interface Attention {
  id: string;
  runId: string;
  deploymentId: string;
  tool: string;
  verb: string;
  resource: string | null;
  arguments: unknown;
  requester: { kind: string; id: string };
  state: string;
  deadline: string;
  createdAt: string;
}

/** Open approval requests: what the run wants to do (redacted), how long is left, and the answer. */
@Component({
  selector: 'pa-approvals',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, RouterLink, StateViewComponent, ProblemViewComponent],
  styles: `
    .request { border: 1px solid var(--border); border-radius: var(--radius); padding: 1rem; margin-bottom: 1rem; }
    .request h2 { margin-top: 0; }
    .overdue { color: var(--bad); font-weight: 600; }
  `,
  template: `
    <h1>Approvals</h1>
    <p class="hint">Requests from runs that need a person. Arguments are shown as recorded: secrets are redacted before they are stored.</p>
    <pa-state [of]="inbox" what="the approvals inbox" [empty]="(inbox.value()?.items?.length ?? 0) === 0" emptyText="Nothing waits for approval.">
      @if (inbox.value(); as page) {
        @for (a of page.items; track a.id) {
          <article class="request" [attr.aria-labelledby]="'req-' + a.id">
            <h2 [id]="'req-' + a.id">{{ a.tool }}{{ a.verb ? ' ' + a.verb : '' }}{{ a.resource ? ' on ' + a.resource : '' }}</h2>
            <dl class="facts">
              <dt>Run</dt><dd><a [routerLink]="['/w', ws(), 'runs', a.runId]"><code>{{ a.runId }}</code></a></dd>
              <dt>Requested</dt><dd>{{ time(a.createdAt) }} by {{ a.requester.kind }} {{ a.requester.id }}</dd>
              <dt>Deadline</dt><dd [class.overdue]="left(a.deadline).overdue">{{ left(a.deadline).text }} ({{ time(a.deadline) }})</dd>
            </dl>
            <h3>Arguments</h3>
            <pre tabindex="0" [attr.aria-label]="'Arguments of ' + a.tool">{{ json(a.arguments) }}</pre>
            @if (session.can('approve')) {
              <div class="actions">
                <button type="button" (click)="approve(a, 'once')" [disabled]="busy()">Approve once</button>
                <button type="button" class="secondary" (click)="approve(a, 'run')" [disabled]="busy()">Approve for this run</button>
              </div>
              <form (ngSubmit)="reject(a)" [attr.aria-label]="'Reject request ' + a.id">
                <label [for]="'reason-' + a.id">Reason for rejecting</label>
                <input [id]="'reason-' + a.id" [name]="'reason-' + a.id" [(ngModel)]="reasons[a.id]" required />
                <div class="actions"><button type="submit" class="danger" [disabled]="busy() || !reasons[a.id]?.trim()">Reject</button></div>
              </form>
            } @else {
              <p class="hint">Answering needs the approve permission in this workspace.</p>
            }
          </article>
        }
      }
    </pa-state>
    <pa-problem [problem]="problem()" />
    @if (answered(); as text) { <p role="status">{{ text }}</p> }
    <div class="actions"><button type="button" class="secondary" (click)="inbox.reload(true)">Refresh</button></div>
  `,
})
export class ApprovalsPage implements OnInit {
  private readonly api = inject(ApiClient);
  private readonly destroyRef = inject(DestroyRef);
  protected readonly session = inject(Session);
  protected readonly ws = this.session.workspaceId;
  protected readonly inbox = loadable(() => this.api.get<{ items: Attention[] }>(`/api/v1/workspaces/${this.ws()}/attention?state=open`));
  protected readonly now = signal(Date.now());
  protected readonly busy = signal(false);
  protected readonly problem = signal<Problem | null>(null);
  protected readonly answered = signal<string | null>(null);
  protected reasons: Record<string, string> = {};
  protected readonly time = formatTime;
  protected readonly json = prettyJson;

  ngOnInit(): void {
    // The countdowns tick once a second; the list itself refreshes on every fifteenth tick.
    let ticks = 0;
    const timer = setInterval(() => {
      this.now.set(Date.now());
      if (++ticks % 15 === 0 && !this.busy()) void this.inbox.reload(true);
    }, 1_000);
    this.destroyRef.onDestroy(() => clearInterval(timer));
  }

  protected left(deadline: string): { text: string; overdue: boolean } {
    return countdown(deadline, this.now());
  }

  protected approve(attention: Attention, scope: 'once' | 'run'): Promise<void> {
    return this.answer(attention, 'approve', { scope }, scope === 'once' ? 'Approved once.' : 'Approved for the rest of this run.');
  }

  protected reject(attention: Attention): Promise<void> {
    return this.answer(attention, 'reject', { reason: (this.reasons[attention.id] ?? '').trim() }, 'Rejected.');
  }

  private async answer(attention: Attention, action: 'approve' | 'reject', body: unknown, done: string): Promise<void> {
    this.busy.set(true);
    this.problem.set(null);
    this.answered.set(null);
    try {
      await this.api.post(`/api/v1/workspaces/${this.ws()}/attention/${attention.id}/${action}`, body);
      this.answered.set(`${done} (${attention.tool} for run ${attention.runId})`);
      await this.inbox.reload(true);
    } catch (error) {
      this.problem.set(problemOf(error));
    } finally {
      this.busy.set(false);
    }
  }
}
