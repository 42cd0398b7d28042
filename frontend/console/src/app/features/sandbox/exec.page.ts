import { ChangeDetectionStrategy, Component, computed, inject, input, signal, type OnInit } from '@angular/core';
import { RouterLink } from '@angular/router';
import { ApiClient, problemOf } from '../../core/api';
import { Session } from '../../core/session';
import { BadgeComponent } from '../../shared/badge.component';
import { formatTime } from '../../shared/format';
import { Loadable } from '../../shared/loadable';
import type { Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { StateViewComponent } from '../../shared/state-view.component';
import { ExecLogComponent } from './exec-log.component';
import { execTone, LIMIT_LABELS } from './exec-log';
import { execPath, type ExecRecord } from './sandbox.api';

/** One exec: what ran and by whom, its output live and then how it ended, cancel while it runs. */
@Component({
  selector: 'pa-exec',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [RouterLink, StateViewComponent, ProblemViewComponent, BadgeComponent, ExecLogComponent],
  styles: `.unenforced { color: var(--warn); }`,
  template: `
    <p><a [routerLink]="['/w', ws(), 'sandbox']">← Sandbox</a></p>
    <h1>Exec <code>{{ execId() }}</code></h1>
    <pa-state [of]="record" what="the exec">
      @if (record.value(); as e) {
        <p><pa-badge [text]="e.state" [kind]="tone()" data-testid="exec-state" /></p>
        <dl class="facts">
          <dt>Command</dt><dd><code>{{ e.argv.join(' ') }}</code></dd>
          <dt>Directory</dt><dd><code>{{ e.cwd }}</code></dd>
          <dt>Workspace</dt><dd>@if (e.runId) { run <a [routerLink]="['/w', ws(), 'runs', e.runId]"><code>{{ e.runId }}</code></a> } @else { a scratch workspace of its own }</dd>
          <dt>Requested by</dt><dd>{{ e.requestedBy.kind }} {{ e.requestedBy.id }}</dd>
          <dt>Driver</dt><dd>{{ e.driver ?? '—' }}</dd>
          <dt>Started</dt><dd>{{ time(e.startedAt) }}</dd>
          <dt>Ended</dt><dd>{{ time(e.endedAt) }}</dd>
          @if (e.result; as r) {
            <dt>Limits that applied</dt>
            <dd>@for (l of limits; track l.key) {<span>{{ l.label }} {{ l.format(r.limits[l.key]) }}@if (!$last) {; }</span>}</dd>
            @if (r.unenforced.length) {
              <dt>Not enforced</dt><dd class="unenforced">{{ r.unenforced.join('; ') }}</dd>
            }
          }
        </dl>
        @if (e.state === 'running' && session.can('sandbox-exec')) {
          <div class="actions"><button type="button" class="danger" (click)="cancel()" [disabled]="busy()">Cancel</button></div>
        }
        @if (note(); as text) { <p role="status">{{ text }}</p> }
        <pa-problem [problem]="problem()" />
      }
    </pa-state>
    <section aria-labelledby="output-heading">
      <h2 id="output-heading">Output</h2>
      <pa-exec-log [workspaceId]="ws()" [execId]="execId()" (ended)="onEnded()" />
    </section>
  `,
})
export class ExecPage implements OnInit {
  private readonly api = inject(ApiClient);
  protected readonly session = inject(Session);
  readonly execId = input.required<string>();
  protected readonly ws = this.session.workspaceId;
  protected readonly record = new Loadable(() => this.api.get<ExecRecord>(execPath(this.ws(), this.execId())));
  protected readonly limits = LIMIT_LABELS;
  protected readonly time = formatTime;
  protected readonly busy = signal(false);
  protected readonly problem = signal<Problem | null>(null);
  protected readonly note = signal<string | null>(null);
  protected readonly tone = computed(() => {
    const record = this.record.value();
    return record ? execTone(record.state, record.exitCode, record.limit) : 'neutral';
  });

  ngOnInit(): void {
    void this.record.reload();
  }

  protected onEnded(): void {
    void this.record.reload(true);
  }

  protected async cancel(): Promise<void> {
    this.busy.set(true);
    this.problem.set(null);
    try {
      const answer = await this.api.post<{ found: boolean }>(`${execPath(this.ws(), this.execId())}/cancel`, {});
      this.note.set(answer.found ? 'Cancelled: the process tree is being killed.' : 'Nothing to cancel: no sandbox replica is running it.');
      await this.record.reload(true);
    } catch (error) {
      this.problem.set(problemOf(error));
    } finally {
      this.busy.set(false);
    }
  }
}
