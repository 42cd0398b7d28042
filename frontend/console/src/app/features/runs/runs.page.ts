import { ChangeDetectionStrategy, Component, computed, inject, input, signal, type OnInit } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { Router, RouterLink } from '@angular/router';
import { ApiClient, problemOf } from '../../core/api';
import { Session } from '../../core/session';
import { BadgeComponent } from '../../shared/badge.component';
import { formatTime } from '../../shared/format';
import { Loadable } from '../../shared/loadable';
import type { Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { RUN_STATES } from '../../shared/run-vocabulary';
import { StateViewComponent } from '../../shared/state-view.component';
import type { Page } from '../workers/workers.api';
import { Directory } from '../../core/directory';
import { formatUsd } from '../../shared/format';
import { NameComponent } from '../../shared/name.component';
import { formatDuration } from './run-meters';
import type { Run, RunFacts } from './runs.api';

@Component({
  selector: 'pa-runs',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, RouterLink, StateViewComponent, BadgeComponent, ProblemViewComponent, NameComponent],
  styles: `
    .filters { display: flex; flex-wrap: wrap; gap: 0 1rem; align-items: end; }
    .filters > div { min-width: 12rem; flex: 1 1 12rem; max-width: 20rem; }
    td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
    th.num { text-align: right; }
    .run-id { color: var(--muted); font-size: 0.8rem; }
  `,
  template: `
    <h1>Runs</h1>
    <form class="filters" (ngSubmit)="apply()" aria-label="Filter runs">
      <div>
        <label for="filter-state">State</label>
        <select id="filter-state" name="state" [(ngModel)]="stateFilter">
          <option value="">any</option>
          @for (s of states; track s) { <option [value]="s">{{ s }}</option> }
        </select>
      </div>
      <div>
        <label for="filter-deployment">Deployment</label>
        <select id="filter-deployment" name="deploymentId" [(ngModel)]="deploymentFilter">
          <option value="">any</option>
          @for (d of deployments(); track d.id) { <option [value]="d.id">{{ d.workerName }} v{{ d.version }} ({{ d.state }})</option> }
          @if (deploymentFilter && !knownDeployment(deploymentFilter)) { <option [value]="deploymentFilter">{{ deploymentFilter }}</option> }
        </select>
      </div>
      <div class="actions"><button type="submit">Apply</button></div>
    </form>
    <pa-state [of]="runs" what="runs" [empty]="items().length === 0" emptyText="No runs match. Start one from a worker's deployment.">
      <div class="table-wrap" tabindex="0">
        <table>
          <thead>
            <tr>
              <th scope="col">Run</th><th scope="col">State</th><th scope="col">Worker</th><th scope="col">Version</th>
              <th scope="col" class="num">Duration</th><th scope="col" class="num">Cost</th><th scope="col">Source</th><th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            @for (r of items(); track r.id) {
              @let f = facts().get(r.id);
              <tr>
                <td><a [routerLink]="[r.id]"><code class="run-id" [title]="r.id">{{ short(r.id) }}</code></a></td>
                <td><pa-badge [text]="r.state" />@if (r.hold) { <span class="hint"> ({{ r.hold }})</span>}</td>
                <td><pa-name [of]="names().worker(r.workerId, f?.workerName)" /></td>
                <td>{{ r.version }}</td>
                <td class="num">{{ f ? duration(f.durationMs) : '—' }}</td>
                <td class="num">{{ f ? usd(f.costUsd) : '—' }}</td>
                <td>{{ r.source }}</td>
                <td>{{ time(r.createdAt) }}</td>
              </tr>
            }
          </tbody>
        </table>
      </div>
      @if (nextCursor()) {
        <div class="actions"><button type="button" class="secondary" (click)="more()" [disabled]="loadingMore()">Load more</button></div>
      }
      <pa-problem [problem]="moreProblem()" />
    </pa-state>
  `,
})
export class RunsPage implements OnInit {
  private readonly api = inject(ApiClient);
  private readonly router = inject(Router);
  private readonly ws = inject(Session).workspaceId;
  private readonly directory = inject(Directory);
  protected readonly names = this.directory.names;
  protected readonly deployments = computed(() => this.directoryDeployments());
  protected readonly facts = signal(new Map<string, RunFacts>());
  protected readonly usd = formatUsd;
  protected readonly duration = formatDuration;
  protected readonly short = (id: string) => (id.length > 13 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id);
  readonly state = input<string | undefined>(undefined);
  readonly deploymentId = input<string | undefined>(undefined);
  protected readonly states = RUN_STATES;
  protected stateFilter = '';
  protected deploymentFilter = '';
  protected readonly items = signal<Run[]>([]);
  protected readonly nextCursor = signal<string | null>(null);
  protected readonly loadingMore = signal(false);
  protected readonly moreProblem = signal<Problem | null>(null);
  protected readonly time = formatTime;
  protected readonly runs = new Loadable(async () => {
    const page = await this.fetchPage(null);
    this.items.set(page.items);
    this.nextCursor.set(page.nextCursor);
    this.facts.set(new Map());
    void this.loadFacts(page.items);
    return page;
  });

  protected knownDeployment(id: string): boolean {
    return this.deployments().some((d) => d.id === id);
  }

  private directoryDeployments() {
    return this.directory.data()?.deployments ?? [];
  }

  /** Worker, duration and cost from the read model; the list is shown without them until they arrive. */
  private async loadFacts(runs: readonly Run[]): Promise<void> {
    if (runs.length === 0) return;
    try {
      const answer = await this.api.get<{ items: RunFacts[] }>(`/api/v1/workspaces/${this.ws()}/run-facts?ids=${encodeURIComponent(runs.map((run) => run.id).join(','))}`);
      this.facts.update((held) => new Map([...held, ...answer.items.map((item) => [item.runId, item] as const)]));
    } catch {
      // The columns stay "—": the runs themselves are on screen.
    }
  }

  ngOnInit(): void {
    void this.directory.ensure();
    this.stateFilter = this.state() ?? '';
    this.deploymentFilter = this.deploymentId() ?? '';
    void this.runs.reload();
  }

  protected apply(): void {
    void this.router.navigate([], { queryParams: { state: this.stateFilter || null, deploymentId: this.deploymentFilter.trim() || null }, replaceUrl: true });
    void this.runs.reload();
  }

  protected async more(): Promise<void> {
    this.loadingMore.set(true);
    this.moreProblem.set(null);
    try {
      const page = await this.fetchPage(this.nextCursor());
      const seen = new Set(this.items().map((run) => run.id));
      const added = page.items.filter((run) => !seen.has(run.id));
      this.items.update((items) => [...items, ...added]);
      void this.loadFacts(added);
      this.nextCursor.set(page.nextCursor);
    } catch (error) {
      this.moreProblem.set(problemOf(error));
    } finally {
      this.loadingMore.set(false);
    }
  }

  private fetchPage(cursor: string | null): Promise<Page<Run>> {
    const query = new URLSearchParams({ limit: '50' });
    if (this.stateFilter) query.set('state', this.stateFilter);
    if (this.deploymentFilter.trim()) query.set('deploymentId', this.deploymentFilter.trim());
    if (cursor) query.set('cursor', cursor);
    return this.api.get<Page<Run>>(`/api/v1/workspaces/${this.ws()}/runs?${query}`);
  }
}
