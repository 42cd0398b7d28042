import { ChangeDetectionStrategy, Component, computed, inject, input, signal, type OnInit } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { Router, RouterLink } from '@angular/router';
import { ApiClient, problemOf } from '../../core/api';
import { Session } from '../../core/session';
import { BadgeComponent } from '../../shared/badge.component';
import { canonicalText, diffLines, type DiffLine } from '../../shared/diff';
import { definitionText } from './definition-text';
import { formatTime, randomKey } from '../../shared/format';
import { loadable } from '../../shared/loadable';
import type { Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { StateViewComponent } from '../../shared/state-view.component';
import { McpServersComponent } from './mcp-servers.component';
import type { Deployment, Page, Version, VersionSummary, WorkerSummary } from './workers.api';

const STARTER = (name: string) => `apiVersion: packetagent/v1
kind: Worker
name: ${name}
description: What this worker does.
model: { preset: default }
instructions: |
  Describe the task here.
tools: []
budgets: { perRunUsd: 0.50 }
bounds: { maxWallSeconds: 600, maxIterations: 10, maxToolCalls: 20 }
exit: { finish: { criteria: ["the task is done"] } }
triggers:
  - { manual: {} }
`;

/** One worker: its definition editor, versions with a diff, a version's MCP servers, deployments, deploy and start. */
@Component({
  selector: 'pa-worker',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, RouterLink, StateViewComponent, ProblemViewComponent, BadgeComponent, McpServersComponent],
  styles: `
    .diff { padding: 0; }
    .diff div { padding: 0 0.75rem; white-space: pre-wrap; }
    .diff .added { background: #dafbe1; }
    .diff .removed { background: #ffebe9; }
    .issues li { margin: 0.2rem 0; }
    .row { display: flex; gap: 1rem; flex-wrap: wrap; align-items: end; }
    .row > div { min-width: 8rem; }
  `,
  template: `
    <p><a [routerLink]="['/w', ws(), 'workers']">← Workers</a></p>
    <pa-state [of]="worker" what="the worker">
      @if (worker.value(); as w) {
        <h1>{{ w.name }}</h1>
        <p>{{ w.description || 'No description.' }}</p>
      }
    </pa-state>

    @if (session.can('author')) {
      <section class="panel" aria-labelledby="editor-heading">
        <h2 id="editor-heading">Definition editor</h2>
        <p class="hint">YAML or JSON (<code>apiVersion: packetagent/v1</code>, <code>kind: Worker</code>). Saving creates a new immutable version; an unchanged definition answers the existing one.</p>
        <label for="definition">Definition</label>
        <textarea id="definition" class="code" name="definition" spellcheck="false" [ngModel]="source()" (ngModelChange)="source.set($event)" [attr.aria-invalid]="saveProblem() ? 'true' : null" aria-describedby="definition-issues"></textarea>
        <div id="definition-issues" aria-live="polite">
          @if (saveProblem(); as p) {
            <div class="state error" role="alert">
              <p><strong>{{ p.title }}</strong>@if (p.detail) {: {{ p.detail }}}</p>
              @if (p.errors.length) {
                <ul class="issues">
                  @for (issue of p.errors; track $index) {
                    <li><code>{{ issue.path || '(document)' }}</code> — {{ issue.message }}</li>
                  }
                </ul>
              }
            </div>
          }
          @if (saved(); as s) {
            <p role="status">{{ s.created ? 'Saved as version ' + s.version : 'Unchanged: this is version ' + s.version }} (digest <code>{{ s.digest.slice(0, 12) }}</code>).</p>
          }
        </div>
        <div class="actions"><button type="button" (click)="save()" [disabled]="busy()">Save as new version</button></div>
      </section>
    }

    <section aria-labelledby="versions-heading">
      <h2 id="versions-heading">Versions</h2>
      <pa-state [of]="versions" what="versions" [empty]="(versions.value()?.items?.length ?? 0) === 0" emptyText="No versions yet: save a definition above.">
        @if (versions.value(); as v) {
          <div class="table-wrap" tabindex="0">
            <table>
              <thead><tr><th scope="col">Version</th><th scope="col">Digest</th><th scope="col">Created</th></tr></thead>
              <tbody>
                @for (item of v.items; track item.version) {
                  <tr><td>{{ item.version }}</td><td><code>{{ item.digest.slice(0, 16) }}</code></td><td>{{ time(item.createdAt) }}</td></tr>
                }
              </tbody>
            </table>
          </div>
          @if (v.items.length > 1) {
            <h3>Compare versions</h3>
            <div class="row">
              <div>
                <label for="diff-from">From</label>
                <select id="diff-from" [ngModel]="diffFrom()" (ngModelChange)="diffFrom.set(+$event)">
                  @for (item of v.items; track item.version) { <option [value]="item.version">{{ item.version }}</option> }
                </select>
              </div>
              <div>
                <label for="diff-to">To</label>
                <select id="diff-to" [ngModel]="diffTo()" (ngModelChange)="diffTo.set(+$event)">
                  @for (item of v.items; track item.version) { <option [value]="item.version">{{ item.version }}</option> }
                </select>
              </div>
              <div class="actions"><button type="button" class="secondary" (click)="compare()">Show differences</button></div>
            </div>
            <pa-problem [problem]="diffProblem()" />
            @if (diff(); as lines) {
              <p class="hint">{{ changedCount() }} changed lines; definitions compared in canonical form (keys sorted).</p>
              <pre class="diff" tabindex="0" aria-label="Differences between the versions">@for (line of lines; track $index) {<div [class]="line.kind"><span class="visually-hidden">{{ line.kind === 'same' ? '' : line.kind + ': ' }}</span>{{ line.kind === 'added' ? '+ ' : line.kind === 'removed' ? '- ' : '  ' }}{{ line.text }}</div>}</pre>
            }
          }
        }
      </pa-state>
    </section>

    @if (versions.value()) {
      <pa-mcp-servers [workerId]="workerId()" [versions]="versionNumbers()" [connected]="mcpConnected() ?? null" />
    }

    @if (session.can('deploy')) {
      <section class="panel" aria-labelledby="deploy-heading">
        <h2 id="deploy-heading">Deploy</h2>
        <div class="row">
          <div>
            <label for="deploy-version">Version</label>
            <select id="deploy-version" [ngModel]="deployVersion()" (ngModelChange)="deployVersion.set(+$event)">
              <option [value]="0">latest</option>
              @for (item of versions.value()?.items ?? []; track item.version) { <option [value]="item.version">{{ item.version }}</option> }
            </select>
          </div>
        </div>
        <label for="overrides">Overrides (JSON)</label>
        <textarea id="overrides" class="code short" name="overrides" spellcheck="false" [ngModel]="overrides()" (ngModelChange)="overrides.set($event)" aria-describedby="overrides-hint"></textarea>
        <p class="hint" id="overrides-hint">Only narrower than the version: <code>tools</code> (fewer verbs or resources, stricter approval), <code>budgets</code>, <code>bounds</code>, <code>triggers.disable</code>. Broadening is refused.</p>
        <pa-problem [problem]="deployProblem()" />
        @if (deployed(); as d) {
          <p role="status">Deployed version {{ d.version }} as <code>{{ d.id }}</code>.</p>
          @for (hook of d.webhooks ?? []; track hook.triggerId) {
            <p class="secret">Webhook <code>{{ hook.triggerId }}</code> secret (shown once): <code>{{ hook.secret }}</code></p>
          }
        }
        <div class="actions">
          <button type="button" (click)="deploy(false)" [disabled]="busy()">Deploy</button>
          @if (deployProblem()?.code === 'deployment_not_ready') {
            <button type="button" class="danger" (click)="deploy(true)" [disabled]="busy()">Deploy anyway</button>
          }
        </div>
        @if (deployProblem()?.code === 'deployment_not_ready') {
          <p class="hint">Deploy anyway arms it now; its runs fail where they need what is missing.</p>
        }
      </section>
    }

    <section aria-labelledby="deployments-heading">
      <h2 id="deployments-heading">Deployments</h2>
      <pa-state [of]="deployments" what="deployments" [empty]="(deployments.value()?.items?.length ?? 0) === 0" emptyText="Not deployed yet.">
        @if (deployments.value(); as page) {
          <div class="table-wrap" tabindex="0">
            <table>
              <thead><tr><th scope="col">Deployment</th><th scope="col">Version</th><th scope="col">Status</th><th scope="col">Active runs</th><th scope="col">Start a run</th></tr></thead>
              <tbody>
                @for (d of page.items; track d.id) {
                  <tr>
                    <td><a [routerLink]="['/w', ws(), 'runs']" [queryParams]="{ deploymentId: d.id }"><code>{{ d.id }}</code></a></td>
                    <td>{{ d.version }}</td>
                    <td><pa-badge [text]="d.status" [kind]="d.status === 'active' ? 'ok' : d.status === 'paused' ? 'warn' : 'bad'" /></td>
                    <td>{{ d.activeRuns }}@if (d.heldRuns) { (+{{ d.heldRuns }} held)}</td>
                    <td>
                      @if (session.can('run-control') && d.status !== 'revoked') {
                        <button type="button" (click)="startRun(d.id)" [disabled]="busy()" [attr.aria-label]="'Start run: deployment ' + d.id">Start run</button>
                      }
                    </td>
                  </tr>
                }
              </tbody>
            </table>
          </div>
          @if (session.can('run-control')) {
            <label for="run-input">Run input (JSON)</label>
            <textarea id="run-input" name="run-input" class="code short" spellcheck="false" [ngModel]="runInput()" (ngModelChange)="runInput.set($event)"></textarea>
          }
          <pa-problem [problem]="runProblem()" />
        }
      </pa-state>
    </section>
  `,
})
export class WorkerPage implements OnInit {
  private readonly api = inject(ApiClient);
  private readonly router = inject(Router);
  protected readonly session = inject(Session);
  readonly workerId = input.required<string>();
  /** Set by the gateway when the authorization server sends the operator back: the credential just connected. */
  readonly mcpConnected = input<string | undefined>(undefined, { alias: 'mcp_connected' });
  protected readonly ws = this.session.workspaceId;
  private readonly base = () => `/api/v1/workspaces/${this.ws()}`;

  protected readonly worker = loadable(() => this.api.get<WorkerSummary>(`${this.base()}/workers/${this.workerId()}`), false);
  protected readonly versions = loadable(() => this.api.get<{ items: VersionSummary[] }>(`${this.base()}/workers/${this.workerId()}/versions`), false);
  protected readonly deployments = loadable(() => this.api.get<Page<Deployment>>(`${this.base()}/deployments?workerId=${encodeURIComponent(this.workerId())}&limit=200`), false);
  protected readonly versionNumbers = computed(() => (this.versions.value()?.items ?? []).map((item) => item.version));
  protected readonly time = formatTime;

  protected readonly source = signal('');
  protected readonly busy = signal(false);
  protected readonly saveProblem = signal<Problem | null>(null);
  protected readonly saved = signal<{ version: number; digest: string; created: boolean } | null>(null);
  protected readonly diffFrom = signal(0);
  protected readonly diffTo = signal(0);
  protected readonly diff = signal<DiffLine[] | null>(null);
  protected readonly diffProblem = signal<Problem | null>(null);
  protected readonly changedCount = computed(() => (this.diff() ?? []).filter((line) => line.kind !== 'same').length);
  protected readonly deployVersion = signal(0);
  protected readonly overrides = signal('{}');
  protected readonly deployProblem = signal<Problem | null>(null);
  protected readonly deployed = signal<Deployment | null>(null);
  protected readonly runInput = signal('{}');
  protected readonly runProblem = signal<Problem | null>(null);

  ngOnInit(): void {
    // Inputs bound from the route are set before ngOnInit, not in the constructor.
    void this.load();
  }

  private async load(): Promise<void> {
    void this.deployments.reload();
    await Promise.all([this.worker.reload(), this.versions.reload()]);
    const worker = this.worker.value();
    const latest = this.versions.value()?.items.at(-1);
    if (latest) {
      this.diffTo.set(latest.version);
      this.diffFrom.set(this.versions.value()?.items.at(-2)?.version ?? latest.version);
      try {
        const version = await this.api.get<Version>(`${this.base()}/workers/${this.workerId()}/versions/${latest.version}`);
        if (!this.source()) this.source.set(definitionText(version));
      } catch (error) {
        this.saveProblem.set(problemOf(error));
      }
    } else if (worker && !this.source()) {
      this.source.set(STARTER(worker.name));
    }
  }

  protected async save(): Promise<void> {
    await this.run(this.saveProblem, async () => {
      this.saved.set(null);
      const text = this.source();
      // JSON is YAML too, but sent as JSON its errors name JSON paths without YAML line numbers.
      const isJson = text.trimStart().startsWith('{');
      const answer = await this.api.request<{ version: number; digest: string; created: boolean }>('POST', `${this.base()}/workers/${this.workerId()}/versions`, {
        raw: { text, contentType: isJson ? 'application/json' : 'application/yaml' },
      });
      this.saved.set(answer);
      await Promise.all([this.versions.reload(true), this.worker.reload(true)]);
    });
  }

  protected async compare(): Promise<void> {
    await this.run(this.diffProblem, async () => {
      const [from, to] = await Promise.all(
        [this.diffFrom(), this.diffTo()].map((n) => this.api.get<Version>(`${this.base()}/workers/${this.workerId()}/versions/${n}`)),
      );
      this.diff.set(diffLines(canonicalText(from!.definition), canonicalText(to!.definition)));
    });
  }

  protected async deploy(acceptMissing: boolean): Promise<void> {
    await this.run(this.deployProblem, async () => {
      this.deployed.set(null);
      let overrides: unknown;
      try {
        overrides = JSON.parse(this.overrides() || '{}');
      } catch (error) {
        throw new Error(`the overrides are not JSON: ${error instanceof Error ? error.message : String(error)}`);
      }
      const body = { workerId: this.workerId(), overrides, ...(this.deployVersion() ? { version: this.deployVersion() } : {}), ...(acceptMissing ? { acceptMissing: true } : {}) };
      this.deployed.set(await this.api.post<Deployment>(`${this.base()}/deployments`, body));
      await this.deployments.reload(true);
    });
  }

  protected async startRun(deploymentId: string): Promise<void> {
    await this.run(this.runProblem, async () => {
      let input: unknown;
      try {
        input = JSON.parse(this.runInput() || '{}');
      } catch (error) {
        throw new Error(`the run input is not JSON: ${error instanceof Error ? error.message : String(error)}`);
      }
      const started = await this.api.post<{ runId: string }>(`${this.base()}/deployments/${deploymentId}/runs`, { input, idempotencyKey: randomKey() });
      await this.router.navigate(['/w', this.ws(), 'runs', started.runId]);
    });
  }

  private async run(problem: ReturnType<typeof signal<Problem | null>>, work: () => Promise<void>): Promise<void> {
    this.busy.set(true);
    problem.set(null);
    try {
      await work();
    } catch (error) {
      problem.set(problemOf(error));
    } finally {
      this.busy.set(false);
    }
  }
}
