import { ChangeDetectionStrategy, Component, computed, inject, signal } from '@angular/core';
import { RouterLink } from '@angular/router';
import { ApiClient } from '../../core/api';
import { Session } from '../../core/session';
import { BadgeComponent } from '../../shared/badge.component';
import { formatBudgetAmount, formatTime, formatUsd } from '../../shared/format';
import { loadable } from '../../shared/loadable';
import { StateViewComponent } from '../../shared/state-view.component';
import { bucketLabel } from './trend-geometry';
import { TrendChartComponent, type TrendSeries } from './trend-chart.component';

/** GET /workspaces/{ws}/trends: runs and model spend per hour or UTC day, oldest first. */
export interface Trends {
  bucket: 'hour' | 'day';
  points: Array<{ start: string; started: number; succeeded: number; failed: number; spendUsd: number }>;
}

export interface Overview {
  asOf: string;
  runs: { queued: number; running: number; waiting: number; succeededToday: number; failedToday: number };
  attention: { open: number };
  spendTodayUsd: number;
  budgets: Array<{ scope: { kind: string; id: string; unit: string; window: string }; limit: number; spent: number; held: number }>;
  health: { status: 'ok' | 'degraded'; relayLagMs: number | null; deadLetters: number; projectionLagEvents: number | null; gaps: number };
}

@Component({
  selector: 'pa-overview',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [StateViewComponent, BadgeComponent, RouterLink, TrendChartComponent],
  styles: `
    .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); gap: 1rem 1.5rem; }
    .toggle { display: inline-flex; gap: 0.25rem; margin: 0 0 0.75rem; }
    .toggle button[aria-pressed='true'] { background: var(--accent); color: var(--accent-fg); }
    details { margin-top: 0.5rem; }
    td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
  `,
  template: `
    <h1>Overview</h1>
    <pa-state [of]="overview" what="the overview" [route]="route()">
      @if (overview.value(); as o) {
        <section aria-labelledby="runs-heading">
          <h2 id="runs-heading">Runs</h2>
          <div class="cards">
            <div class="card"><div class="value">{{ o.runs.queued }}</div><div class="label">queued</div></div>
            <div class="card"><div class="value">{{ o.runs.running }}</div><div class="label">running</div></div>
            <div class="card"><div class="value">{{ o.runs.waiting }}</div><div class="label">waiting</div></div>
            <div class="card"><div class="value">{{ o.runs.succeededToday }}</div><div class="label">succeeded today</div></div>
            <div class="card"><div class="value">{{ o.runs.failedToday }}</div><div class="label">failed today</div></div>
            <div class="card">
              <div class="value">{{ o.attention.open }}</div>
              <div class="label"><a [routerLink]="['/w', ws(), 'approvals']">open approvals</a></div>
            </div>
            <div class="card"><div class="value">{{ usd(o.spendTodayUsd) }}</div><div class="label">spent today</div></div>
          </div>
        </section>
        <section aria-labelledby="trends-heading">
          <h2 id="trends-heading">Trends</h2>
          <div class="toggle" role="group" aria-label="Trend period">
            <button type="button" class="secondary" [attr.aria-pressed]="bucket() === 'hour'" (click)="showBucket('hour')">Last 24 hours</button>
            <button type="button" class="secondary" [attr.aria-pressed]="bucket() === 'day'" (click)="showBucket('day')">Last 14 days</button>
          </div>
          <pa-state [of]="trends" what="the trends" [route]="'GET /api/v1/workspaces/' + ws() + '/trends'">
            @if (trends.value(); as t) {
              <div class="charts">
                <pa-trend-chart caption="Runs" [series]="runSeries()" [labels]="labels()" [bucket]="t.bucket" />
                <pa-trend-chart caption="Spend (model turns)" [series]="spendSeries()" [labels]="labels()" [bucket]="t.bucket" [format]="usd" />
              </div>
              <details>
                <summary>Figures</summary>
                <div class="table-wrap" tabindex="0">
                  <table>
                    <thead><tr><th scope="col">{{ t.bucket === 'hour' ? 'Hour (UTC)' : 'Day (UTC)' }}</th><th scope="col" class="num">Started</th><th scope="col" class="num">Succeeded</th><th scope="col" class="num">Failed</th><th scope="col" class="num">Spend</th></tr></thead>
                    <tbody>
                      @for (p of t.points; track p.start) {
                        <tr><td>{{ label(p.start, t.bucket) }}</td><td class="num">{{ p.started }}</td><td class="num">{{ p.succeeded }}</td><td class="num">{{ p.failed }}</td><td class="num">{{ usd(p.spendUsd) }}</td></tr>
                      }
                    </tbody>
                  </table>
                </div>
              </details>
            }
          </pa-state>
        </section>
        <section aria-labelledby="health-heading">
          <h2 id="health-heading">Health <pa-badge [text]="o.health.status" [kind]="o.health.status === 'ok' ? 'ok' : 'bad'" /></h2>
          <dl class="facts">
            <dt>Relay lag</dt><dd>{{ o.health.relayLagMs === null ? '—' : o.health.relayLagMs + ' ms' }}</dd>
            <dt>Dead letters</dt><dd>{{ o.health.deadLetters }}</dd>
            <dt>Projection lag</dt><dd>{{ o.health.projectionLagEvents === null ? '—' : o.health.projectionLagEvents + ' events' }}</dd>
            <dt>Projection gaps</dt><dd>{{ o.health.gaps }}</dd>
            <dt>As of</dt><dd>{{ time(o.asOf) }}</dd>
          </dl>
        </section>
        <section aria-labelledby="budgets-heading">
          <h2 id="budgets-heading">Budgets</h2>
          @if (o.budgets.length === 0) {
            <p class="state">No budget scopes yet: they appear with the first run that reserves against one.</p>
          } @else {
            <div class="table-wrap" tabindex="0">
              <table>
                <thead><tr><th scope="col">Scope</th><th scope="col">Window</th><th scope="col">Spent</th><th scope="col">Held</th><th scope="col">Limit</th></tr></thead>
                <tbody>
                  @for (b of o.budgets; track b.scope.kind + b.scope.id + b.scope.unit + b.scope.window) {
                    <tr>
                      <td>{{ b.scope.kind }} <code>{{ b.scope.id }}</code> ({{ b.scope.unit }})</td>
                      <td>{{ b.scope.window }}</td>
                      <td>{{ amount(b.scope.unit, b.spent) }}</td>
                      <td>{{ amount(b.scope.unit, b.held) }}</td>
                      <td>{{ amount(b.scope.unit, b.limit) }}</td>
                    </tr>
                  }
                </tbody>
              </table>
            </div>
          }
        </section>
      }
    </pa-state>
    <div class="actions"><button type="button" class="secondary" (click)="refresh()">Refresh</button></div>
  `,
})
export class OverviewPage {
  private readonly api = inject(ApiClient);
  protected readonly ws = inject(Session).workspaceId;
  protected readonly route = () => `GET /api/v1/workspaces/${this.ws()}/overview`;
  protected readonly overview = loadable(() => this.api.get<Overview>(`/api/v1/workspaces/${this.ws()}/overview`));
  protected readonly usd = formatUsd;
  protected readonly time = formatTime;
  protected readonly amount = formatBudgetAmount;
  protected readonly bucket = signal<'hour' | 'day'>('hour');
  // Asked beside the overview, not after it: the cards never wait for the charts.
  protected readonly trends = loadable(() => this.api.get<Trends>(`/api/v1/workspaces/${this.ws()}/trends?bucket=${this.bucket()}`));
  protected readonly labels = computed(() => (this.trends.value()?.points ?? []).map((p) => p.start));
  protected readonly runSeries = computed<TrendSeries[]>(() => {
    const points = this.trends.value()?.points ?? [];
    return [
      { label: 'succeeded', colour: 'var(--ok)', values: points.map((p) => p.succeeded) },
      { label: 'failed', colour: 'var(--bad)', values: points.map((p) => p.failed) },
      { label: 'started', colour: 'var(--accent)', values: points.map((p) => p.started), line: true },
    ];
  });
  protected readonly spendSeries = computed<TrendSeries[]>(() => [{ label: 'spend', colour: 'var(--warn)', values: (this.trends.value()?.points ?? []).map((p) => p.spendUsd) }]);
  protected readonly label = bucketLabel;

  protected showBucket(bucket: 'hour' | 'day'): void {
    if (this.bucket() === bucket) return;
    this.bucket.set(bucket);
    void this.trends.reload(true);
  }

  protected refresh(): void {
    void this.overview.reload(true);
    void this.trends.reload(true);
  }
}
