import { ChangeDetectionStrategy, Component, DestroyRef, computed, inject, input, signal, type OnInit } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { RouterLink } from '@angular/router';
import { ApiClient, ApiError, problemOf } from '../../core/api';
import { downloadJson } from '../../core/download';
import { LiveStream, type LiveStatus } from '../../core/live-stream';
import { Session } from '../../core/session';
import { BadgeComponent } from '../../shared/badge.component';
import { formatTime, formatUsd, isActiveRunState } from '../../shared/format';
import { loadable } from '../../shared/loadable';
import { describeProblem, type Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import type { SseMessage } from '../../shared/sse';
import { StateViewComponent } from '../../shared/state-view.component';
import { describeEvent, mergeEvents, toRunEvent, totalCost, type RunEvent } from '../../shared/timeline';
import type { Run, RunSummary, RunSupervision } from './runs.api';
import { RunMigrationComponent } from './run-migration.component';
import { RunQuarantineComponent } from './run-quarantine.component';
import { ExecLogComponent } from '../sandbox/exec-log.component';
import { commandCalls } from './run-commands';
import { Directory } from '../../core/directory';
import { MeterComponent } from '../../shared/meter.component';
import { NameComponent } from '../../shared/name.component';
import type { Attention } from '../approvals/attention-facts';
import { RunApprovalComponent } from './run-approval.component';
import { describeWait, isAnswerable, runControls, summaryTrails } from './run-controls';
import { runMeters } from './run-meters';
import { buildWaterfall } from './waterfall';
import { WaterfallComponent } from './waterfall.component';

const POLL_MS = 2_000;

/** One run: its state and summary, the live timeline (with the output of its commands), stop / pause / resume, migrating a waiting run, and release or end while quarantined. */
@Component({
  selector: 'pa-run',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [
    FormsModule,
    RouterLink,
    StateViewComponent,
    ProblemViewComponent,
    BadgeComponent,
    RunMigrationComponent,
    RunQuarantineComponent,
    ExecLogComponent,
    NameComponent,
    MeterComponent,
    RunApprovalComponent,
    WaterfallComponent,
  ],
  styles: `
    ol.timeline { list-style: none; padding: 0; margin: 0; border-left: 3px solid var(--border); }
    ol.timeline li { margin: 0 0 0.6rem 0; padding: 0.4rem 0.75rem; position: relative; }
    ol.timeline li.model { background: #f6f8fa; }
    ol.timeline li.outcome { font-weight: 600; }
    .entry-head { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: baseline; }
    .entry-detail { white-space: pre-wrap; margin: 0.25rem 0 0; color: var(--fg); font-size: 0.9rem; }
    .at { color: var(--muted); font-size: 0.8rem; }
    .live { font-size: 0.85rem; }
    h1 .named-id { font-weight: 400; }
    .controls input { flex: 1 1 12rem; max-width: 20rem; }
  `,
  template: `
    <p><a [routerLink]="['/w', ws(), 'runs']">← Runs</a></p>
    <h1>@if (summary.value(); as s) {Run of {{ s.workerName }} } @else {Run }<code class="named-id" [title]="runId()">{{ runId() }}</code></h1>
    <pa-state [of]="run" what="the run">
      @if (run.value(); as r) {
        <p>
          <pa-badge [text]="r.state" data-testid="run-state" />
          @if (r.hold) { <span class="hint"> held: {{ r.hold }}</span> }
          @if (r.stopRequested) { <span class="hint"> stop requested</span> }
          @if (r.pauseRequested) { <span class="hint"> pause requested</span> }
          @if (waitText(); as w) { <span data-testid="waiting-on"> waiting on {{ w }}</span> }
        </p>
        <dl class="facts">
          <dt>Worker</dt><dd><a [routerLink]="['/w', ws(), 'workers', r.workerId]"><pa-name [of]="names().worker(r.workerId, summary.value()?.workerName)" /></a></dd>
          <dt>Deployment</dt><dd><pa-name [of]="names().deployment(r.deploymentId)" [showId]="true" /> (version {{ r.version }})</dd>
          <dt>Source</dt><dd>{{ r.source }}</dd>
          <dt>Created</dt><dd>{{ time(r.createdAt) }}</dd>
          <dt>Updated</dt><dd>{{ time(r.updatedAt) }}</dd>
          <dt>Cost (from model turns)</dt><dd data-testid="run-cost">{{ usd(cost()) }}</dd>
          <dt>Notifications</dt><dd><a [routerLink]="['/w', ws(), 'notifications']" [queryParams]="{ runId: r.id }">Messages sent about this run</a></dd>
        </dl>
        @if (approval.value(); as a) {
          @if (a.state === 'open' && r.state === 'waiting') {
            <pa-run-approval [attention]="a" [ws]="ws()" (answered)="onAnswered()" />
          }
        }
        @let c = controls();
        @if (session.can('run-control') && (c.stop || c.pause || c.resume)) {
          <div class="actions controls">
            @if (c.stop || c.pause) {
              <label class="visually-hidden" for="control-reason">Reason</label>
              <input id="control-reason" name="reason" placeholder="reason (optional)" [(ngModel)]="reason" />
            }
            @if (c.stop) { <button type="button" class="danger" (click)="control('stop')" [disabled]="busy()">Stop</button> }
            @if (c.pause) { <button type="button" class="secondary" (click)="control('pause')" [disabled]="busy()">Pause</button> }
            @if (c.resume) { <button type="button" class="secondary" (click)="control('resume')" [disabled]="busy()">Resume</button> }
          </div>
        }
        <pa-problem [problem]="controlProblem()" />
        @if (r.state === 'waiting' && session.can('deployment-control')) {
          <pa-run-migration [run]="r" [workspaceId]="ws() ?? ''" (migrated)="onMigrated()" />
        }
        <pa-run-quarantine [supervision]="supervision.value() ?? null" [runPath]="base()" (recovered)="onRecovered($event)" />
      }
    </pa-state>

    <section aria-labelledby="summary-heading">
      <h2 id="summary-heading">Summary</h2>
      <pa-state [of]="summary" what="the run summary" [route]="'GET /api/v1/workspaces/' + ws() + '/runs/' + runId() + '/summary'">
        @if (summary.value(); as s) {
          <dl class="facts">
            <dt>Worker</dt><dd>{{ s.workerName }} v{{ s.version }}</dd>
            <dt>Phase</dt><dd>{{ s.phase }}</dd>
            <dt>Iteration</dt><dd>{{ s.iteration }}</dd>
            <dt>Tool calls</dt><dd>{{ s.toolCalls }}</dd>
            <dt>Cost</dt><dd>{{ usd(s.costUsd) }}</dd>
            @if (s.model) { <dt>Model</dt><dd>{{ s.model.provider }}/{{ s.model.model }}@if (s.model.scripted) { (scripted)}</dd> }
            @if (s.waitingOn; as w) {
              <dt>Waiting on</dt>
              <dd>@if (answerable()) { <a [routerLink]="['/w', ws(), 'approvals']" [fragment]="'req-' + w.attentionId">{{ waitText() }}</a> } @else { {{ waitText() }} }</dd>
            }
            @if (s.lastCheckpoint) { <dt>Last checkpoint</dt><dd>#{{ s.lastCheckpoint.seq }} at {{ time(s.lastCheckpoint.at) }}, <code>{{ s.lastCheckpoint.digest.slice(0, 16) }}</code></dd> }
            @if (s.outcome) { <dt>Outcome</dt><dd>{{ s.outcome.type }}@if (s.outcome.reason) { — {{ s.outcome.reason }}}@if (s.outcome.detail) { — {{ s.outcome.detail }}}</dd> }
            <dt>Started</dt><dd>{{ time(s.startedAt) }}</dd>
            <dt>Ended</dt><dd>{{ time(s.endedAt) }}</dd>
          </dl>
          @if (meters().length) {
            <h3>Bounds used</h3>
            <div class="meters" data-testid="run-meters">
              @for (m of meters(); track m.label) { <pa-meter [label]="m.label" [text]="m.text" [ratio]="m.ratio" /> }
            </div>
          }
        }
      </pa-state>
    </section>

    <section aria-labelledby="steps-heading">
      <h2 id="steps-heading">Steps</h2>
      <p class="hint">Each step of the run on its time axis: model calls (with their cost), tool calls, approvals and other waits.</p>
      <pa-waterfall [of]="waterfall()" />
    </section>

    <section aria-labelledby="timeline-heading">
      <h2 id="timeline-heading">Timeline</h2>
      <p class="live" role="status" data-testid="live-status">{{ liveText() }}</p>
      @if (timelineProblem(); as p) {
        <div class="state error" role="alert">Could not load the run's events: {{ describe(p) }}</div>
      }
      @if (entries().length === 0 && !timelineProblem()) {
        <p class="state">No events yet.</p>
      }
      <ol class="timeline" aria-label="Run events, oldest first">
        @for (e of entries(); track e.position) {
          <li [class]="e.kind">
            <div class="entry-head">
              <pa-badge [text]="e.kind" [kind]="e.tone" />
              <strong>{{ e.title }}</strong>
              <span class="at">#{{ e.position }} · {{ time(e.at) }}</span>
            </div>
            @if (e.detail) { <p class="entry-detail">{{ e.detail }}</p> }
            @if (calls().get(e.position); as call) {
              <!-- A run_command call: its output live while it runs, its result's previews once it has one. -->
              <pa-exec-log [workspaceId]="ws()" [execId]="call.execId" [live]="!call.ended && active()" [compact]="true" />
            }
          </li>
        }
      </ol>
    </section>

    <section aria-labelledby="evidence-heading">
      <h2 id="evidence-heading">Evidence</h2>
      <p>A digest-bound bundle of this run's events, policy decisions, approvals, checkpoints and effect receipts; <code>packetagent audit verify-bundle</code> checks it offline.</p>
      <div class="actions"><button type="button" class="secondary" (click)="exportEvidence()" [disabled]="busy()">Download evidence bundle</button></div>
      <pa-problem [problem]="evidenceProblem()" />
    </section>
  `,
})
export class RunPage implements OnInit {
  private readonly api = inject(ApiClient);
  protected readonly session = inject(Session);
  private readonly destroyRef = inject(DestroyRef);
  private readonly directory = inject(Directory);
  protected readonly names = this.directory.names;
  readonly runId = input.required<string>();
  protected readonly ws = this.session.workspaceId;
  protected readonly base = () => `/api/v1/workspaces/${this.ws()}/runs/${encodeURIComponent(this.runId())}`;

  protected readonly run = loadable(() => this.api.get<Run>(this.base()), false);
  protected readonly summary = loadable(() => this.api.get<RunSummary>(`${this.base()}/summary`), false);
  /** Shown only when it says quarantined: a process without the supervisor cannot answer it, and then there is nothing to show. */
  protected readonly supervision = loadable(() => this.api.get<RunSupervision>(`${this.base()}/supervision`), false);
  protected readonly events = signal<RunEvent[]>([]);
  protected readonly entries = computed(() => this.events().map(describeEvent));
  protected readonly calls = computed(() => commandCalls(this.runId(), this.events()));
  protected readonly cost = computed(() => totalCost(this.events()));
  protected readonly active = computed(() => isActiveRunState(this.run.value()?.state ?? 'queued'));
  /** The attention record a waiting run needs answered, when it waits on one. */
  protected readonly approval = loadable(() => {
    const id = this.summary.value()?.waitingOn?.attentionId;
    return id ? this.api.get<Attention>(`/api/v1/workspaces/${this.ws()}/attention/${encodeURIComponent(id)}`) : Promise.resolve(null);
  }, false);
  private approvalFor: string | null = null;
  private settling = false;
  protected readonly waitingOn = computed(() => (this.run.value()?.state === 'waiting' ? (this.summary.value()?.waitingOn ?? null) : null));
  protected readonly answerable = computed(() => isAnswerable(this.waitingOn()));
  protected readonly waitText = computed(() => {
    const waiting = this.waitingOn();
    const attention = this.approval.value();
    return waiting ? describeWait(waiting, attention && attention.id === waiting.attentionId ? attention : null) : null;
  });
  protected readonly controls = computed(() => {
    const run = this.run.value();
    return run ? runControls(run, this.waitingOn()) : { stop: false, pause: false, resume: false };
  });
  /** Ticks while the run is active, so wall time and open steps move. */
  protected readonly now = signal(Date.now());
  protected readonly meters = computed(() => {
    const summary = this.summary.value();
    return summary ? runMeters(summary, this.events(), this.now()) : [];
  });
  protected readonly waterfall = computed(() => buildWaterfall(this.events(), this.now()));
  protected readonly live = signal<LiveStatus>('connecting');
  protected readonly liveProblem = signal<Problem | null>(null);
  protected readonly timelineProblem = signal<Problem | null>(null);
  protected readonly controlProblem = signal<Problem | null>(null);
  protected readonly evidenceProblem = signal<Problem | null>(null);
  protected readonly busy = signal(false);
  protected readonly liveText = computed(() => {
    if (!this.active() && this.run.status() === 'ready') return 'The run has ended: the timeline is complete.';
    switch (this.live()) {
      case 'live':
        return 'Live: new events appear as they happen.';
      case 'connecting':
        return 'Connecting to the live stream…';
      case 'reconnecting':
        return 'Live stream interrupted; reconnecting (nothing is missed).';
      case 'unavailable':
        return `Live stream unavailable (${this.liveProblem() ? describeProblem(this.liveProblem()!, 'the run events stream') : 'refused'}); refreshing every ${POLL_MS / 1000} s instead.`;
      default:
        return 'Live updates stopped.';
    }
  });
  protected reason = '';
  protected readonly time = formatTime;
  protected readonly usd = formatUsd;
  protected readonly describe = (p: Problem) => describeProblem(p, 'GET …/runs/{runId}/events');
  private stream: LiveStream | null = null;
  private pollTimer: ReturnType<typeof setTimeout> | null = null;
  private refreshTimer: ReturnType<typeof setTimeout> | null = null;
  private cursor: string | null = null;
  private eventsRouteMissing = false;
  private destroyed = false;

  ngOnInit(): void {
    const ticker = setInterval(() => {
      if (this.active()) this.now.set(Date.now());
    }, 1_000);
    this.destroyRef.onDestroy(() => {
      this.destroyed = true;
      clearInterval(ticker);
      this.stream?.stop();
      if (this.pollTimer) clearTimeout(this.pollTimer);
      if (this.refreshTimer) clearTimeout(this.refreshTimer);
    });
    void this.directory.ensure();
    void this.start();
  }

  /** The attention the summary names, asked for again only when it names another one. */
  private async refreshApproval(): Promise<void> {
    const id = this.summary.value()?.waitingOn?.attentionId ?? null;
    if (id === this.approvalFor && this.approval.status() !== 'loading') return;
    this.approvalFor = id;
    await this.approval.reload(true);
  }

  /** Answered inline: the run resumes, and its header, summary and timeline follow. */
  protected async onAnswered(): Promise<void> {
    this.approvalFor = null;
    await Promise.all([this.run.reload(true), this.summary.reload(true), this.catchUp()]);
    await this.refreshApproval();
  }

  private async start(): Promise<void> {
    await Promise.all([this.run.reload(), this.summary.reload().then(() => this.refreshApproval()), this.supervision.reload(), this.catchUp()]);
    void this.settleSummary();
    if (this.destroyed || !this.active()) return;
    const last = this.events().at(-1)?.position;
    this.stream = new LiveStream({
      url: `${this.base()}/events/stream`,
      lastEventId: last === undefined ? null : String(last),
      onMessage: (message) => this.onMessage(message),
      onStatus: (status, problem) => {
        this.live.set(status);
        if (problem) this.liveProblem.set(problem);
        if (status === 'unavailable') this.poll();
      },
    });
    this.stream.start();
  }

  /** Every page of the run's events after the last one held (the cursor is the server's). */
  private async catchUp(): Promise<void> {
    if (this.eventsRouteMissing) return;
    try {
      for (;;) {
        const query = new URLSearchParams({ limit: '200' });
        if (this.cursor) query.set('after', this.cursor);
        const page = await this.api.get<{ items: unknown[]; nextCursor: string | null }>(`${this.base()}/events?${query}`);
        const incoming = page.items.map((item) => toRunEvent(item)).filter((event): event is RunEvent => event !== null);
        this.events.update((events) => mergeEvents(events, incoming));
        if (page.nextCursor) this.cursor = page.nextCursor;
        if (!page.nextCursor || page.items.length === 0) break;
      }
      this.timelineProblem.set(null);
    } catch (error) {
      if (error instanceof ApiError && error.problem.status === 404 && !this.run.problem()) this.eventsRouteMissing = true;
      this.timelineProblem.set(problemOf(error));
    }
  }

  private onMessage(message: SseMessage): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(message.data);
    } catch {
      return;
    }
    const event = toRunEvent(parsed, message.id ? Number(message.id) : undefined);
    if (!event) return;
    this.events.update((events) => mergeEvents(events, [event]));
    this.scheduleRefresh();
  }

  /** Many events arrive together (a turn, its decision and effect): refresh the header once for them. */
  private scheduleRefresh(): void {
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(async () => {
      this.refreshTimer = null;
      await Promise.all([this.run.reload(true), this.summary.reload(true).then(() => this.refreshApproval()), this.supervision.reload(true)]);
      this.now.set(Date.now());
      if (!this.active()) this.stream?.stop();
      void this.settleSummary();
    }, 250);
  }

  /**
   * The summary comes from the read model, which may trail the run by a moment, and a waiting or
   * ended run sends no further event to refresh it: ask again (a bounded number of times) until
   * the summary shows the run's state, what a waiting run waits on, and an ended run's end.
   */
  private async settleSummary(attempts = 10): Promise<void> {
    if (this.settling) return;
    this.settling = true;
    try {
      for (let attempt = 0; attempt < attempts && !this.destroyed; attempt++) {
        if (!summaryTrails(this.run.value(), this.summary.value())) return;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        await this.summary.reload(true);
        await this.refreshApproval();
      }
    } finally {
      this.settling = false;
    }
  }

  /** Without the stream: the events page and the run, until the run ends. */
  private poll(): void {
    if (this.destroyed) return;
    this.pollTimer = setTimeout(async () => {
      await Promise.all([this.catchUp(), this.run.reload(true), this.summary.reload(true).then(() => this.refreshApproval())]);
      void this.settleSummary();
      if (this.active()) this.poll();
    }, POLL_MS);
  }

  /** The run moved to another version: its header, summary and the `run.migrated` line of its timeline. */
  protected async onMigrated(): Promise<void> {
    await Promise.all([this.run.reload(true), this.summary.reload(true), this.catchUp()]);
  }

  protected async control(action: 'stop' | 'pause' | 'resume'): Promise<void> {
    this.busy.set(true);
    this.controlProblem.set(null);
    try {
      const body = action === 'resume' ? {} : this.reason.trim() ? { reason: this.reason.trim() } : {};
      this.run.value.set(await this.api.post<Run>(`${this.base()}/${action}`, body));
      this.reason = '';
    } catch (error) {
      this.controlProblem.set(problemOf(error));
    } finally {
      this.busy.set(false);
    }
  }

  /** Released or ended from quarantine: the supervision it answered, then the run, its summary and timeline again. */
  protected async onRecovered(supervision: RunSupervision): Promise<void> {
    this.supervision.value.set(supervision);
    await Promise.all([this.run.reload(true), this.summary.reload(true), this.catchUp()]);
  }

  protected async exportEvidence(): Promise<void> {
    this.busy.set(true);
    this.evidenceProblem.set(null);
    try {
      downloadJson(`evidence-${this.runId()}.json`, await this.api.get<unknown>(`${this.base()}/evidence`));
    } catch (error) {
      this.evidenceProblem.set(problemOf(error));
    } finally {
      this.busy.set(false);
    }
  }
}
