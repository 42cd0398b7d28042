import { ChangeDetectionStrategy, Component, Injector, afterNextRender, computed, inject, input, signal, type OnInit } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { Router, RouterLink } from '@angular/router';
import { ApiClient, problemOf } from '../../core/api';
import { Session } from '../../core/session';
import { BadgeComponent } from '../../shared/badge.component';
import { formatTime } from '../../shared/format';
import { Loadable } from '../../shared/loadable';
import type { Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { StateViewComponent } from '../../shared/state-view.component';
import {
  DELIVERY_STATES,
  deliveriesQuery,
  deliveryProgress,
  deliveryStateOf,
  deliveryTone,
  routeLabel,
  routeName,
  waitText,
  withDelivery,
  type Delivery,
  type DeliveryFilter,
  type DeliveryPage,
  type DeliveryState,
} from './deliveries';

/** The notification outbox: what went through the routes of workers, what retries, what was dead-lettered, and redrive. */
@Component({
  selector: 'pa-notifications',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, RouterLink, StateViewComponent, ProblemViewComponent, BadgeComponent],
  styles: `
    .filters { display: flex; flex-wrap: wrap; gap: 0 1rem; align-items: end; }
    .filters > div { min-width: 12rem; }
    .progress { display: block; color: var(--muted); font-size: 0.8rem; white-space: nowrap; margin-top: 0.2rem; }
    details table { margin-top: 0.5rem; font-size: 0.85rem; }
    details th, details td { padding: 0.25rem 0.4rem; }
    .nowrap { white-space: nowrap; }
    .status:empty { margin: 0; }
  `,
  template: `
    <h1>Notifications</h1>
    <p class="hint">Every message sent through a worker's notification routes, with each attempt. A dead-lettered one can be redriven: it is sent again under the same delivery id.</p>
    <form class="filters" (ngSubmit)="apply()" aria-label="Filter deliveries">
      <div>
        <label for="delivery-state">State</label>
        <select id="delivery-state" name="state" [(ngModel)]="stateFilter">
          <option value="">all</option>
          @for (s of states; track s) { <option [value]="s">{{ s }}</option> }
        </select>
      </div>
      <div>
        <label for="delivery-run">Run</label>
        <input id="delivery-run" name="runId" [(ngModel)]="runFilter" placeholder="run id" autocomplete="off" />
      </div>
      <div class="actions"><button type="submit">Apply</button></div>
    </form>
    <pa-state [of]="page" what="the deliveries" [route]="'GET /api/v1/workspaces/' + ws() + '/notifications/deliveries'" [empty]="(page.value()?.items?.length ?? 0) === 0" [emptyText]="emptyText()">
      @if (page.value(); as p) {
        <div class="table-wrap" tabindex="0" role="region" aria-label="Deliveries">
          <table>
            <thead>
              <tr>
                <th scope="col">State</th><th scope="col">Trigger</th><th scope="col">Channel</th><th scope="col">Route</th><th scope="col">Run</th>
                <th scope="col">Attempts</th><th scope="col">Last error</th><th scope="col">Queued</th><th scope="col"><span class="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              @for (d of p.items; track d.deliveryId) {
                <tr>
                  <td>
                    <pa-badge [text]="d.state" [kind]="tone(d.state)" />
                    @if (progress(d); as pr) { <span class="progress">{{ pr.label }}@if (pr.at) { {{ time(pr.at) }}}</span> }
                  </td>
                  <td>{{ d.trigger }}</td>
                  <td>{{ d.route.channel }}</td>
                  <td>{{ name(d.route) }}@if (d.route.to) { <span class="hint"> → {{ d.route.to }}</span>}</td>
                  <td>@if (d.runId) { <a [routerLink]="['/w', ws(), 'runs', d.runId]"><code>{{ d.runId }}</code></a> } @else { — }</td>
                  <td>
                    @if (d.attemptLog.length) {
                      <details>
                        <summary>{{ d.attempts }} attempt{{ d.attempts === 1 ? '' : 's' }}<span class="visually-hidden"> of the {{ d.trigger }} message through {{ label(d.route) }}</span></summary>
                        <table>
                          <caption class="visually-hidden">Attempts of the {{ d.trigger }} message through {{ label(d.route) }}</caption>
                          <thead><tr><th scope="col">Time</th><th scope="col">Waited</th><th scope="col">Outcome</th><th scope="col">Status</th><th scope="col">Code</th><th scope="col">Message</th></tr></thead>
                          <tbody>
                            @for (a of d.attemptLog; track $index) {
                              <tr>
                                <td class="nowrap">{{ time(a.at) }}</td>
                                <td class="nowrap">{{ wait(a.afterMs) }}</td>
                                <td>{{ a.outcome }}</td>
                                <td>{{ a.status ?? '—' }}</td>
                                <td>@if (a.code) { <code>{{ a.code }}</code> } @else { — }</td>
                                <td>{{ a.message ?? '' }}</td>
                              </tr>
                            }
                          </tbody>
                        </table>
                        @if (d.state === 'pending') { <p class="hint">Expires {{ time(d.expiresAt) }} if it is not delivered by then.</p> }
                      </details>
                    } @else {
                      {{ d.attempts }}
                    }
                  </td>
                  <td>@if (d.lastError; as e) { <code>{{ e.code }}</code>: {{ e.message }} }</td>
                  <td class="nowrap">{{ time(d.createdAt) }}</td>
                  <td>
                    @if (d.state === 'dead' && canRedrive()) {
                      <button type="button" class="secondary" (click)="redrive(d)" [disabled]="redriving() !== null" [attr.aria-label]="'Redrive the ' + d.trigger + ' message through ' + label(d.route)">Redrive</button>
                    }
                  </td>
                </tr>
              }
            </tbody>
          </table>
        </div>
        <div class="actions">
          @if (after()) { <button type="button" class="secondary" (click)="newer()">Newer</button> }
          @if (p.next) { <button type="button" class="secondary" (click)="older(p.next)">Older</button> }
        </div>
      }
    </pa-state>
    @if (hasDead() && !canRedrive()) { <p class="hint">Redriving a dead-lettered delivery needs the run-control permission in this workspace.</p> }
    <pa-problem [problem]="problem()" />
    <p id="redrive-status" class="status" role="status" tabindex="-1">{{ done() }}</p>
    <div class="actions"><button type="button" class="secondary" (click)="page.reload(true)">Refresh</button></div>
  `,
})
export class NotificationsPage implements OnInit {
  private readonly api = inject(ApiClient);
  private readonly router = inject(Router);
  private readonly injector = inject(Injector);
  private readonly session = inject(Session);
  protected readonly ws = this.session.workspaceId;
  /** Query parameters, so a run page or a message can link to its deliveries. */
  readonly state = input<string | undefined>(undefined);
  readonly runId = input<string | undefined>(undefined);
  protected readonly states = DELIVERY_STATES;
  protected stateFilter: DeliveryState | '' = '';
  protected runFilter = '';
  private readonly shown = signal<DeliveryFilter>({ state: '', runId: '' });
  /** The `after` of the page on screen (null: the newest), and those of the newer pages before it. */
  protected readonly after = signal<string | null>(null);
  private readonly newerCursors = signal<Array<string | null>>([]);
  protected readonly page = new Loadable(() => this.api.get<DeliveryPage>(`/api/v1/workspaces/${this.ws()}/notifications/deliveries?${deliveriesQuery(this.shown(), this.after())}`));
  protected readonly canRedrive = computed(() => this.session.can('run-control'));
  protected readonly hasDead = computed(() => (this.page.value()?.items ?? []).some((d) => d.state === 'dead'));
  protected readonly redriving = signal<string | null>(null);
  protected readonly problem = signal<Problem | null>(null);
  protected readonly done = signal('');
  protected readonly emptyText = computed(() => {
    const { state, runId } = this.shown();
    if (this.after()) return 'No older deliveries.';
    return state || runId.trim() ? 'No deliveries match this filter.' : 'No deliveries yet: they appear here once a worker with notification routes has something to tell.';
  });
  protected readonly time = formatTime;
  protected readonly wait = waitText;
  protected readonly tone = deliveryTone;
  protected readonly name = routeName;
  protected readonly label = routeLabel;
  protected readonly progress = deliveryProgress;

  ngOnInit(): void {
    this.stateFilter = deliveryStateOf(this.state());
    this.runFilter = this.runId() ?? '';
    this.shown.set({ state: this.stateFilter, runId: this.runFilter.trim() });
    void this.page.reload();
  }

  protected apply(): void {
    const filter: DeliveryFilter = { state: this.stateFilter, runId: this.runFilter.trim() };
    void this.router.navigate([], { queryParams: { state: filter.state || null, runId: filter.runId || null }, replaceUrl: true });
    this.shown.set(filter);
    this.showPage(null, []);
  }

  protected older(next: string): void {
    this.showPage(next, [...this.newerCursors(), this.after()]);
  }

  protected newer(): void {
    const cursors = this.newerCursors();
    this.showPage(cursors.at(-1) ?? null, cursors.slice(0, -1));
  }

  protected async redrive(delivery: Delivery): Promise<void> {
    this.redriving.set(delivery.deliveryId);
    this.problem.set(null);
    this.done.set('');
    try {
      const updated = await this.api.post<Delivery>(`/api/v1/workspaces/${this.ws()}/notifications/deliveries/${encodeURIComponent(delivery.deliveryId)}/redrive`, {});
      const page = this.page.value();
      if (page) this.page.value.set(withDelivery(page, updated));
      this.done.set(`Redriven: the ${delivery.trigger} message through ${routeLabel(delivery.route)} is ${updated.state} again.`);
      // The button is gone with the dead state: keep the keyboard where the answer is.
      afterNextRender(() => document.getElementById('redrive-status')?.focus(), { injector: this.injector });
    } catch (error) {
      this.problem.set(problemOf(error));
      // Redriven elsewhere, or delivered meanwhile (409 delivery_not_dead): show what it is now.
      void this.page.reload(true);
    } finally {
      this.redriving.set(null);
    }
  }

  private showPage(after: string | null, newerCursors: Array<string | null>): void {
    this.after.set(after);
    this.newerCursors.set(newerCursors);
    this.problem.set(null);
    this.done.set('');
    void this.page.reload();
  }
}
