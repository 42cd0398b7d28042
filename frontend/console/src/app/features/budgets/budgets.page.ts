import { ChangeDetectionStrategy, Component, computed, inject } from '@angular/core';
import { ApiClient } from '../../core/api';
import { Directory } from '../../core/directory';
import { Session } from '../../core/session';
import { NameComponent } from '../../shared/name.component';
import { BadgeComponent } from '../../shared/badge.component';
import { formatBudgetAmount, formatTime } from '../../shared/format';
import { loadable } from '../../shared/loadable';
import { StateViewComponent } from '../../shared/state-view.component';
import { BudgetChartComponent, type BudgetBar } from './budget-chart.component';

export interface ScopeUsage {
  kind: string;
  id: string;
  unit: string;
  window: string;
  limit: number;
  spent: number;
  held: number;
  blockedAt: string | null;
}

function percent(part: number, whole: number): number {
  return whole > 0 ? Math.min(100, Math.round((part / whole) * 1000) / 10) : 0;
}

@Component({
  selector: 'pa-budgets',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [StateViewComponent, BadgeComponent, BudgetChartComponent, NameComponent],
  template: `
    <h1>Budgets</h1>
    <pa-state [of]="usage" what="budget usage" [empty]="(usage.value()?.scopes?.length ?? 0) === 0" emptyText="No budget scopes yet: they appear when a run first reserves against a limit.">
      @if (usage.value(); as u) {
        <p class="hint">As of {{ time(u.asOf) }}. Each bar is one scope and window, as a share of its limit.</p>
        <pa-budget-chart [bars]="bars()" description="Budget usage per scope as a share of its limit; the table below has the figures." />
        <div class="table-wrap" tabindex="0">
          <table>
            <thead><tr><th scope="col">Scope</th><th scope="col">Unit</th><th scope="col">Window</th><th scope="col">Spent</th><th scope="col">Held</th><th scope="col">Limit</th><th scope="col">Status</th></tr></thead>
            <tbody>
              @for (s of u.scopes; track s.kind + s.id + s.unit + s.window) {
                <tr>
                  <td>{{ s.kind }} <pa-name [of]="names().scopeOwner(s.kind, s.id)" /></td>
                  <td>{{ s.unit }}</td>
                  <td>{{ s.window }}</td>
                  <td>{{ amount(s.unit, s.spent) }}</td>
                  <td>{{ amount(s.unit, s.held) }}</td>
                  <td>{{ amount(s.unit, s.limit) }}</td>
                  <td>@if (s.blockedAt) { <pa-badge text="blocked" kind="bad" /> } @else { <pa-badge text="open" kind="ok" /> }</td>
                </tr>
              }
            </tbody>
          </table>
        </div>
      }
    </pa-state>
  `,
})
export class BudgetsPage {
  private readonly api = inject(ApiClient);
  private readonly ws = inject(Session).workspaceId;
  private readonly directory = inject(Directory);
  protected readonly names = this.directory.names;
  constructor() {
    void this.directory.ensure();
  }
  protected readonly usage = loadable(() => this.api.get<{ asOf: string; scopes: ScopeUsage[] }>(`/api/v1/workspaces/${this.ws()}/budgets`));
  protected readonly bars = computed<BudgetBar[]>(() =>
    (this.usage.value()?.scopes ?? []).map((s) => {
      const spent = percent(s.spent, s.limit);
      const held = Math.min(100 - spent, percent(s.held, s.limit));
      const owner = this.names().scopeOwner(s.kind, s.id);
      return { label: `${s.kind} ${owner.known ? owner.label : s.id.slice(0, 14)} ${s.unit}/${s.window}`, spent, held, left: Math.max(0, 100 - spent - held) };
    }),
  );
  protected readonly time = formatTime;
  protected readonly amount = formatBudgetAmount;
}
