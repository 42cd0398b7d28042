import { ChangeDetectionStrategy, Component, inject, signal } from '@angular/core';
import { RouterLink } from '@angular/router';
import { FormsModule } from '@angular/forms';
import { ApiClient, problemOf } from '../../core/api';
import { downloadJson } from '../../core/download';
import { Directory } from '../../core/directory';
import { Session } from '../../core/session';
import { formatTime } from '../../shared/format';
import type { Run } from '../runs/runs.api';
import type { Page } from '../workers/workers.api';
import { BadgeComponent } from '../../shared/badge.component';
import { Loadable } from '../../shared/loadable';
import type { Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { StateViewComponent } from '../../shared/state-view.component';

interface VerifyReport {
  ok: boolean;
  streamsChecked: number;
  eventsChecked: number;
  breaks: Array<{ stream: string; streamVersion: number; globalPosition: number; reason: string; detail: string }>;
}

/** Digest-chain verification of the workspace's event log, and evidence bundles per run. */
@Component({
  selector: 'pa-audit',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, RouterLink, StateViewComponent, ProblemViewComponent, BadgeComponent],
  template: `
    <h1>Audit</h1>
    <section aria-labelledby="verify-heading">
      <h2 id="verify-heading">Verify the event log</h2>
      <p>Recomputes every event's digest and checks each stream's chain of digests, so an edited, removed or reordered event shows here with its stream and position.</p>
      <div class="actions"><button type="button" (click)="verify()" [disabled]="report.status() === 'loading' && started()">Verify now</button></div>
      @if (started()) {
        <pa-state [of]="report" what="the verification report" [route]="'GET /api/v1/workspaces/' + ws() + '/audit/verify'">
          @if (report.value(); as r) {
            <p>
              <pa-badge [text]="r.ok ? 'intact' : 'broken'" [kind]="r.ok ? 'ok' : 'bad'" />
              {{ r.eventsChecked }} events in {{ r.streamsChecked }} streams checked.
            </p>
            @if (r.breaks.length) {
              <div class="table-wrap" tabindex="0">
                <table>
                  <thead><tr><th scope="col">Stream</th><th scope="col">Version</th><th scope="col">Position</th><th scope="col">Reason</th><th scope="col">Detail</th></tr></thead>
                  <tbody>
                    @for (b of r.breaks; track b.globalPosition + b.stream) {
                      <tr><td>@if (runOf(b.stream); as runId) { <a [routerLink]="['/w', ws(), 'runs', runId]">run <code [title]="runId">{{ runId.slice(0, 8) }}…</code></a> } @else { <code>{{ b.stream }}</code> }</td><td>{{ b.streamVersion }}</td><td>{{ b.globalPosition }}</td><td>{{ b.reason }}</td><td>{{ b.detail }}</td></tr>
                    }
                  </tbody>
                </table>
              </div>
            }
          }
        </pa-state>
      }
    </section>
    <section class="panel" aria-labelledby="evidence-heading">
      <h2 id="evidence-heading">Export evidence</h2>
      <p>A digest-bound bundle of one run: its events, policy decisions, approvals, checkpoints and effect receipts. <code>packetagent audit verify-bundle FILE</code> verifies it offline.</p>
      <form (ngSubmit)="exportEvidence()" aria-label="Export a run's evidence">
        <label for="evidence-run">Run</label>
        <input id="evidence-run" name="runId" required [(ngModel)]="runId" autocomplete="off" list="recent-runs" aria-describedby="evidence-run-hint" />
        <p class="hint" id="evidence-run-hint">A run id; the list offers the latest runs by worker.</p>
        <datalist id="recent-runs">
          @for (r of recent(); track r.id) {
            <option [value]="r.id">{{ names().worker(r.workerId).label }} · {{ r.state }} · {{ time(r.createdAt) }}</option>
          }
        </datalist>
        <div class="actions"><button type="submit" [disabled]="busy()">Download bundle</button></div>
      </form>
      <pa-problem [problem]="problem()" />
      @if (done(); as text) { <p role="status">{{ text }}</p> }
    </section>
  `,
})
export class AuditPage {
  private readonly api = inject(ApiClient);
  protected readonly ws = inject(Session).workspaceId;
  protected readonly report = new Loadable(() => this.api.get<VerifyReport>(`/api/v1/workspaces/${this.ws()}/audit/verify`));
  protected readonly started = signal(false);
  protected readonly busy = signal(false);
  protected readonly problem = signal<Problem | null>(null);
  protected readonly done = signal<string | null>(null);
  protected runId = '';
  private readonly directory = inject(Directory);
  protected readonly names = this.directory.names;
  protected readonly time = formatTime;
  /** The latest runs, offered by worker name in the evidence form. */
  protected readonly recent = signal<Run[]>([]);

  constructor() {
    void this.directory.ensure();
    this.api.get<Page<Run>>(`/api/v1/workspaces/${this.ws()}/runs?limit=20`).then(
      (page) => this.recent.set(page.items),
      () => undefined,
    );
  }

  /** The run a `run-<id>` stream belongs to, null for any other stream. */
  protected runOf(stream: string): string | null {
    return stream.startsWith('run-') ? stream.slice(4) : null;
  }

  protected verify(): void {
    this.started.set(true);
    void this.report.reload();
  }

  protected async exportEvidence(): Promise<void> {
    const runId = this.runId.trim();
    this.busy.set(true);
    this.problem.set(null);
    this.done.set(null);
    try {
      downloadJson(`evidence-${runId}.json`, await this.api.get<unknown>(`/api/v1/workspaces/${this.ws()}/runs/${encodeURIComponent(runId)}/evidence`));
      this.done.set(`Downloaded evidence-${runId}.json.`);
    } catch (error) {
      this.problem.set(problemOf(error));
    } finally {
      this.busy.set(false);
    }
  }
}
