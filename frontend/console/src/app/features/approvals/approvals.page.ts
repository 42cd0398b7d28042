import { ChangeDetectionStrategy, Component, DestroyRef, inject, signal, type OnInit } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { RouterLink } from '@angular/router';
import { ApiClient, problemOf } from '../../core/api';
import { Session } from '../../core/session';
import { countdown, formatTime, formatUsd, prettyJson } from '../../shared/format';
import { loadable } from '../../shared/loadable';
import type { Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { StateViewComponent } from '../../shared/state-view.component';
import { Directory } from '../../core/directory';
import { NameComponent } from '../../shared/name.component';
import { approversText, argumentsEditable, budgetRequestOf, parseEditedArguments, quorumText, type Attention } from './attention-facts';

type Scope = 'once' | 'run';

/** Open approval requests: what the run wants to do (redacted), how long is left, and the answer, with the call's arguments edited or as they are. */
@Component({
  selector: 'pa-approvals',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, RouterLink, StateViewComponent, ProblemViewComponent, NameComponent],
  styles: `
    .request { border: 1px solid var(--border); border-radius: var(--radius); padding: 1rem; margin-bottom: 1rem; }
    .request h2 { margin-top: 0; overflow-wrap: anywhere; }
    .request .lead { margin: 0 0 0.25rem; }
    .request details { margin-top: 0.5rem; }
    .request summary { cursor: pointer; color: var(--accent); }
    @media (max-width: 640px) { .request { padding: 0.75rem; } }
    .overdue { color: var(--bad); font-weight: 600; }
    .edit { border-top: 1px solid var(--border); margin-top: 0.75rem; padding-top: 0.25rem; }
    fieldset { border: 1px solid var(--border); border-radius: var(--radius); margin: 0.75rem 0; padding: 0.5rem 0.75rem; }
    legend { font-weight: 600; padding: 0 0.25rem; }
    label.inline { display: inline-flex; gap: 0.4rem; align-items: center; font-weight: 400; margin: 0.25rem 1rem 0.25rem 0; }
    label.inline input { width: auto; }
    ul.approved { margin: 0; padding-left: 1.1rem; }
  `,
  template: `
    <h1>Approvals</h1>
    <p class="hint">Requests from runs that need a person; arguments as recorded, secrets redacted.</p>
    <pa-state [of]="inbox" what="the approvals inbox" [empty]="(inbox.value()?.items?.length ?? 0) === 0" emptyText="Nothing waits for approval.">
      @if (inbox.value(); as page) {
        @for (a of page.items; track a.id) {
          <article class="request" [attr.aria-labelledby]="'req-' + a.id">
            @let b = budget(a.arguments);
            @if (b) {
              <h2 [id]="'req-' + a.id">Budget request: {{ usd(b.requestedUsd) }} more</h2>
            } @else {
              <h2 [id]="'req-' + a.id">{{ a.tool }}{{ a.verb ? ' ' + a.verb : '' }}{{ a.resource ? ' on ' + a.resource : '' }}</h2>
            }
            <p class="lead">
              <a [routerLink]="['/w', ws(), 'runs', a.runId]" [title]="'Run ' + a.runId">Run of <pa-name [of]="names().deployment(a.deploymentId)" /></a>
              · <span [class.overdue]="left(a.deadline).overdue">{{ left(a.deadline).text }}</span>
            </p>
            @if (session.can('approve')) {
              <div class="actions">
                <button type="button" (click)="approve(a, 'once')" [disabled]="busy()">Approve once</button>
                <button type="button" class="secondary" (click)="approve(a, 'run')" [disabled]="busy()">Approve for this run</button>
                @if (editable(a) && editing() !== a.id) {
                  <button type="button" class="secondary" (click)="startEdit(a)" [disabled]="busy()">Edit arguments and approve</button>
                }
              </div>
            }
            @if (b) {
              <h3>Request</h3>
              <dl class="facts">
                <dt>Asks for</dt><dd>{{ usd(b.requestedUsd) }} more</dd>
                <dt>Spent</dt><dd>{{ usd(b.spentUsd) }} of its {{ usd(b.limitUsd) }} limit</dd>
                @if (b.reason) { <dt>Reason</dt><dd>{{ b.reason }}</dd> }
              </dl>
            } @else {
              <h3>Arguments</h3>
              <pre tabindex="0" [attr.aria-label]="'Arguments of ' + a.tool">{{ json(a.arguments) }}</pre>
            }
            <details>
              <summary>Request details</summary>
            <dl class="facts">
              <dt>Run</dt><dd><a [routerLink]="['/w', ws(), 'runs', a.runId]"><code>{{ a.runId }}</code></a></dd>
              <dt>Requested</dt><dd>{{ time(a.createdAt) }} by <pa-name [of]="names().actor(a.requester)" /></dd>
              <dt>Deadline</dt><dd [class.overdue]="left(a.deadline).overdue">{{ left(a.deadline).text }} ({{ time(a.deadline) }})</dd>
              @if (a.remindAt || a.remindedAt) {
                <dt>Reminder</dt><dd>@if (a.remindedAt) { sent {{ time(a.remindedAt) }} } @else { {{ time(a.remindAt) }} }</dd>
              }
              @if (a.escalateAt || a.escalatedAt) {
                <dt>Escalation</dt>
                <dd>@if (a.escalatedAt) { escalated {{ time(a.escalatedAt) }} } @else { {{ time(a.escalateAt) }} }@if (a.rules?.escalate; as e) { to {{ e.to }}}</dd>
              }
              @if (quorum(a); as q) {
                <dt>Quorum</dt>
                <dd>
                  {{ q }}
                  @if (a.approvals?.length) {
                    <ul class="approved">
                      @for (p of a.approvals; track $index) { <li><pa-name [of]="names().actor(p.actor)" /> ({{ p.scope === 'run' ? 'for this run' : 'once' }}, {{ time(p.at) }})</li> }
                    </ul>
                  }
                </dd>
              }
              @if (approvers(a.rules); as who) { <dt>Approvers</dt><dd>{{ who }}</dd> }
            </dl>
            </details>
            @if (session.can('approve')) {
              @if (editing() === a.id) {
                <form class="edit" (ngSubmit)="approveEdited(a)" [attr.aria-labelledby]="'edit-heading-' + a.id">
                  <h3 [id]="'edit-heading-' + a.id">Edit arguments and approve</h3>
                  <label [for]="'edit-' + a.id">Arguments to approve instead (JSON object)</label>
                  <textarea
                    class="code short"
                    [id]="'edit-' + a.id"
                    [name]="'edit-' + a.id"
                    [rows]="rowsOf(edits[a.id])"
                    spellcheck="false"
                    autocomplete="off"
                    [(ngModel)]="edits[a.id]"
                    [attr.aria-invalid]="editError() ? 'true' : null"
                    [attr.aria-describedby]="'edit-hint-' + a.id + (editError() ? ' edit-error-' + a.id : '')"
                  ></textarea>
                  <p class="hint" [id]="'edit-hint-' + a.id">
                    The whole call is made with these arguments: type again any value shown as ***. They are checked against the tool and this run's grants again, and the edit and who made it are recorded.
                  </p>
                  @if (editError(); as message) { <p class="field-error" [id]="'edit-error-' + a.id" role="alert">{{ message }}</p> }
                  <fieldset>
                    <legend>Approve</legend>
                    <label class="inline"><input type="radio" [name]="'edit-scope-' + a.id" value="once" [(ngModel)]="editScope" /> Once</label>
                    <label class="inline"><input type="radio" [name]="'edit-scope-' + a.id" value="run" [(ngModel)]="editScope" /> For this run</label>
                  </fieldset>
                  <pa-problem [problem]="editProblem()" />
                  <div class="actions">
                    <button type="submit" [disabled]="busy()">Approve edited call</button>
                    <button type="button" class="secondary" (click)="cancelEdit()" [disabled]="busy()">Cancel</button>
                  </div>
                </form>
              }
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
  private readonly directory = inject(Directory);
  protected readonly names = this.directory.names;
  protected readonly inbox = loadable(() => this.api.get<{ items: Attention[] }>(`/api/v1/workspaces/${this.ws()}/attention?state=open`));
  protected readonly now = signal(Date.now());
  protected readonly busy = signal(false);
  protected readonly problem = signal<Problem | null>(null);
  protected readonly answered = signal<string | null>(null);
  protected reasons: Record<string, string> = {};
  protected readonly time = formatTime;
  protected readonly json = prettyJson;
  protected readonly usd = formatUsd;
  protected readonly budget = budgetRequestOf;
  protected readonly approvers = approversText;
  protected readonly editable = argumentsEditable;
  /** The attention whose arguments are being edited: one at a time. */
  protected readonly editing = signal<string | null>(null);
  protected readonly editError = signal<string | null>(null);
  /** The server's refusal of an edit, shown in the editor rather than under the list. */
  protected readonly editProblem = signal<Problem | null>(null);
  protected editScope: Scope = 'once';
  protected edits: Record<string, string> = {};

  ngOnInit(): void {
    void this.directory.ensure();
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

  protected quorum(attention: Attention): string | null {
    return quorumText(attention.rules, attention.approvals);
  }

  protected rowsOf(text: string | undefined): number {
    return Math.min(24, Math.max(6, (text ?? '').split('\n').length + 1));
  }

  protected startEdit(attention: Attention): void {
    this.edits[attention.id] ??= prettyJson(attention.arguments);
    this.editScope = 'once';
    this.editError.set(null);
    this.editProblem.set(null);
    this.editing.set(attention.id);
  }

  protected cancelEdit(): void {
    this.editing.set(null);
    this.editError.set(null);
    this.editProblem.set(null);
  }

  protected async approveEdited(attention: Attention): Promise<void> {
    const parsed = parseEditedArguments(this.edits[attention.id] ?? '', attention.arguments);
    if (!parsed.ok) {
      this.editError.set(parsed.message);
      this.editProblem.set(null);
      return;
    }
    this.editError.set(null);
    const scope = this.editScope;
    // A refusal (edit_invalid, edit_not_granted, ...) keeps the editor open with the server's reason in it.
    const answered = await this.answer(attention, 'approve', { scope, arguments: parsed.value }, scope === 'once' ? 'Approved once with edited arguments.' : 'Approved for this run with edited arguments.', this.editProblem);
    if (answered) {
      this.editing.set(null);
      delete this.edits[attention.id];
    }
  }

  protected async approve(attention: Attention, scope: Scope): Promise<void> {
    if (await this.answer(attention, 'approve', { scope }, scope === 'once' ? 'Approved once.' : 'Approved for the rest of this run.')) this.closeEditorOf(attention);
  }

  protected async reject(attention: Attention): Promise<void> {
    if (await this.answer(attention, 'reject', { reason: (this.reasons[attention.id] ?? '').trim() }, 'Rejected.')) this.closeEditorOf(attention);
  }

  private closeEditorOf(attention: Attention): void {
    if (this.editing() === attention.id) this.editing.set(null);
    delete this.edits[attention.id];
  }

  private async answer(attention: Attention, action: 'approve' | 'reject', body: unknown, done: string, refusedInto = this.problem): Promise<boolean> {
    this.busy.set(true);
    this.problem.set(null);
    this.editProblem.set(null);
    this.answered.set(null);
    try {
      const answer = await this.api.post<Attention>(`/api/v1/workspaces/${this.ws()}/attention/${attention.id}/${action}`, body);
      // Under a quorum an approval is recorded and the request stays open for the others.
      const progress = action === 'approve' && answer?.state === 'open' ? quorumText(answer.rules, answer.approvals) : null;
      const what = budgetRequestOf(attention.arguments) ? 'budget request' : attention.tool;
      this.answered.set(progress ? `Approval recorded: ${progress} (${what} for run ${attention.runId})` : `${done} (${what} for run ${attention.runId})`);
      await this.inbox.reload(true);
      return true;
    } catch (error) {
      refusedInto.set(problemOf(error));
      return false;
    } finally {
      this.busy.set(false);
    }
  }
}
