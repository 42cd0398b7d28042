import { ChangeDetectionStrategy, Component, inject } from '@angular/core';
import { RouterLink } from '@angular/router';
import { ApiClient } from '../../core/api';
import { Session } from '../../core/session';
import { BadgeComponent } from '../../shared/badge.component';
import { formatBudgetAmount, formatTime, formatUsd } from '../../shared/format';
import { loadable } from '../../shared/loadable';
import { StateViewComponent } from '../../shared/state-view.component';

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
  imports: [StateViewComponent, BadgeComponent, RouterLink],
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
    <div class="actions"><button type="button" class="secondary" (click)="overview.reload(true)">Refresh</button></div>
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
}
