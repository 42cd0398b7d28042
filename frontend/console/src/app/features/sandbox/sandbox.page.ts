import { ChangeDetectionStrategy, Component, computed, inject, signal } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { Router, RouterLink } from '@angular/router';
import { ApiClient, problemOf } from '../../core/api';
import { Session } from '../../core/session';
import { BadgeComponent } from '../../shared/badge.component';
import { formatTime } from '../../shared/format';
import { loadable } from '../../shared/loadable';
import { issuesByPath, type Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { StateViewComponent } from '../../shared/state-view.component';
import { execTone, LIMIT_LABELS, parseEnvLines } from './exec-log';
import { sandboxBase, type ExecAccepted, type ExecResult, type ExecSummary, type SandboxStatus } from './sandbox.api';

const PLACED = ['command', 'cwd', 'env', 'limits.wallTimeMs', 'runId'];

/** The sandbox: what it runs commands in and under which limits, a command of one's own, and the recent execs. */
@Component({
  selector: 'pa-sandbox',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, RouterLink, StateViewComponent, ProblemViewComponent, BadgeComponent],
  styles: `
    .unenforced { color: var(--warn); }
    ul.plain { margin: 0.25rem 0; padding-left: 1.25rem; }
    td.command { word-break: break-all; }
  `,
  template: `
    <h1>Sandbox</h1>
    <p class="hint">Commands run here with no network, no shell and hard limits, in bubblewrap or Docker; nothing ever falls back to the host.</p>

    <section aria-labelledby="status-heading">
      <h2 id="status-heading">Status</h2>
      <pa-state [of]="status" what="the sandbox status" [route]="'GET ' + base() + '/status'">
        @if (status.value(); as s) {
          <p data-testid="sandbox-driver">
            @if (s.driver) {
              Commands run in <pa-badge [text]="s.driver" kind="ok" />.
            } @else {
              <pa-badge text="no driver" kind="bad" /> Nothing can run: install one of the drivers below.
            }
          </p>
          <div class="table-wrap" tabindex="0">
            <table aria-label="Sandbox drivers">
              <thead><tr><th scope="col">Driver</th><th scope="col">Available</th><th scope="col">Found</th><th scope="col">Not enforced here</th></tr></thead>
              <tbody>
                @for (d of s.drivers; track d.name) {
                  <tr [attr.data-testid]="'driver-' + d.name">
                    <td><strong>{{ d.name }}</strong>@if (d.name === s.driver) { <span class="hint"> (in use)</span>}</td>
                    <td><pa-badge [text]="d.available ? 'yes' : 'no'" [kind]="d.available ? 'ok' : 'bad'" /></td>
                    <td>{{ d.detail }}</td>
                    <td>
                      @if (d.unenforced.length) {
                        <ul class="plain unenforced">@for (u of d.unenforced; track u) { <li>{{ u }}</li> }</ul>
                      } @else { <span class="hint">every limit</span> }
                    </td>
                  </tr>
                }
              </tbody>
            </table>
          </div>
          <h3>Limits</h3>
          <div class="table-wrap" tabindex="0">
            <table aria-label="Limits of a command">
              <thead><tr><th scope="col">Limit</th><th scope="col">When none is asked for</th><th scope="col">Most a command may ask for</th></tr></thead>
              <tbody>
                @for (l of limits; track l.key) {
                  <tr><td>{{ l.label }}</td><td>{{ l.format(s.defaults[l.key]) }}</td><td>{{ l.format(s.maximum[l.key]) }}</td></tr>
                }
              </tbody>
            </table>
          </div>
          <dl class="facts">
            <dt>Environment names allowed</dt><dd><code>{{ s.envAllowlist.join(', ') }}</code></dd>
            <dt>Egress origins</dt><dd>{{ s.egressOrigins.length ? s.egressOrigins.join(', ') : 'none' }}</dd>
            <dt>Browser</dt><dd>{{ s.browser.available ? 'available' : 'unavailable' }}: {{ s.browser.detail }}</dd>
          </dl>
        }
      </pa-state>
    </section>

    @if (session.can('sandbox-exec')) {
      <section class="panel" aria-labelledby="run-heading">
        <h2 id="run-heading">Run a command</h2>
        <form (ngSubmit)="run()" aria-label="Run a command in the sandbox">
          <label for="exec-command">Command</label>
          <input id="exec-command" name="command" required [(ngModel)]="command" placeholder="node --version" autocomplete="off" spellcheck="false" />
          <p class="hint">The program and its arguments split on spaces; no shell: ; | &amp; $ &lt; &gt; backticks and quotes are refused.</p>
          @for (message of issues('command'); track $index) { <p class="field-error">{{ message }}</p> }
          <label for="exec-cwd">Directory (relative to the workspace)</label>
          <input id="exec-cwd" name="cwd" [(ngModel)]="cwd" placeholder="." autocomplete="off" />
          @for (message of issues('cwd'); track $index) { <p class="field-error">{{ message }}</p> }
          <label for="exec-env">Environment (NAME=VALUE, one a line)</label>
          <textarea id="exec-env" name="env" class="code short" [(ngModel)]="env" spellcheck="false"></textarea>
          @for (message of envIssues(); track $index) { <p class="field-error">{{ message }}</p> }
          <label for="exec-timeout">Wall time limit in seconds (optional)</label>
          <input id="exec-timeout" name="timeoutSeconds" type="number" min="1" [(ngModel)]="timeoutSeconds" />
          @for (message of issues('limits.wallTimeMs'); track $index) { <p class="field-error">{{ message }}</p> }
          <label for="exec-run">In the workspace of run (optional)</label>
          <input id="exec-run" name="runId" [(ngModel)]="runId" placeholder="run id" autocomplete="off" />
          @for (message of issues('runId'); track $index) { <p class="field-error">{{ message }}</p> }
          <div class="actions"><button type="submit" [disabled]="busy() || !command.trim()">Run</button></div>
        </form>
        <pa-problem [problem]="problem()" [placed]="placed()" />
      </section>
    } @else {
      <p class="hint">Running a command takes the sandbox-exec permission (admin or owner).</p>
    }

    <section aria-labelledby="recent-heading">
      <h2 id="recent-heading">Recent execs</h2>
      <div class="actions"><button type="button" class="secondary" (click)="recent.reload(true)">Refresh</button></div>
      <pa-state [of]="recent" what="recent execs" [empty]="(recent.value()?.items?.length ?? 0) === 0" emptyText="No commands have run in this workspace yet.">
        @if (recent.value(); as page) {
          <div class="table-wrap" tabindex="0">
            <table aria-label="Recent execs, newest first">
              <thead><tr><th scope="col">Exec</th><th scope="col">State</th><th scope="col">Command</th><th scope="col">Run</th><th scope="col">By</th><th scope="col">Started</th></tr></thead>
              <tbody>
                @for (e of page.items; track e.execId) {
                  <tr>
                    <td><a [routerLink]="[e.execId]"><code>{{ e.execId }}</code></a></td>
                    <td><pa-badge [text]="stateText(e)" [kind]="tone(e)" /></td>
                    <td class="command"><code>{{ e.argv.join(' ') }}</code></td>
                    <td>@if (e.runId) { <a [routerLink]="['/w', ws(), 'runs', e.runId]"><code>{{ e.runId }}</code></a> } @else { <span class="hint">scratch</span> }</td>
                    <td>{{ e.requestedBy.kind }} {{ e.requestedBy.id }}</td>
                    <td>{{ time(e.startedAt) }}</td>
                  </tr>
                }
              </tbody>
            </table>
          </div>
        }
      </pa-state>
    </section>
  `,
})
export class SandboxPage {
  private readonly api = inject(ApiClient);
  private readonly router = inject(Router);
  protected readonly session = inject(Session);
  protected readonly ws = this.session.workspaceId;
  protected readonly base = () => sandboxBase(this.ws());
  protected readonly status = loadable(() => this.api.get<SandboxStatus>(`${this.base()}/status`));
  protected readonly recent = loadable(() => this.api.get<{ items: ExecSummary[] }>(`${this.base()}/exec?limit=50`));
  protected readonly limits = LIMIT_LABELS;
  protected readonly time = formatTime;
  protected command = '';
  protected cwd = '';
  protected env = '';
  protected timeoutSeconds: number | null = null;
  protected runId = '';
  protected readonly busy = signal(false);
  protected readonly problem = signal<Problem | null>(null);
  protected readonly badEnvLines = signal<number[]>([]);
  protected readonly placed = computed(() => [...PLACED, ...(this.problem()?.errors ?? []).map((issue) => issue.path).filter((path) => path.startsWith('env.'))]);
  protected readonly envIssues = computed(() => {
    const grouped = issuesByPath(this.problem()?.errors ?? []);
    const fromServer = [...grouped.entries()].filter(([path]) => path === 'env' || path.startsWith('env.')).flatMap(([path, messages]) => messages.map((m) => (path === 'env' ? m : `${path.slice(4)}: ${m}`)));
    return [...this.badEnvLines().map((line) => `line ${line} is not NAME=VALUE`), ...fromServer];
  });

  protected issues(path: string): string[] {
    return issuesByPath(this.problem()?.errors ?? []).get(path) ?? [];
  }

  protected stateText(exec: ExecSummary): string {
    if (exec.state === 'running') return 'running';
    if (exec.limit) return `${exec.state}: ${exec.limit.replace('_', ' ')}`;
    return exec.exitCode === null ? exec.state : `${exec.state} ${exec.exitCode}`;
  }

  protected tone(exec: ExecSummary) {
    return execTone(exec.state, exec.exitCode, exec.limit);
  }

  protected async run(): Promise<void> {
    const { env, bad } = parseEnvLines(this.env);
    this.badEnvLines.set(bad);
    if (bad.length) return;
    this.busy.set(true);
    this.problem.set(null);
    try {
      const body = {
        command: this.command.trim(),
        ...(this.cwd.trim() ? { cwd: this.cwd.trim() } : {}),
        ...(Object.keys(env).length ? { env } : {}),
        ...(this.timeoutSeconds ? { limits: { wallTimeMs: Math.round(this.timeoutSeconds * 1000) } } : {}),
        ...(this.runId.trim() ? { runId: this.runId.trim() } : {}),
      };
      // 202 once it has started, or 200 with its result when it ended before it could start: the detail page shows either.
      const answer = await this.api.post<ExecAccepted | ExecResult>(`${this.base()}/exec`, body);
      await this.router.navigate(['/w', this.ws(), 'sandbox', answer.execId]);
    } catch (error) {
      this.problem.set(problemOf(error));
    } finally {
      this.busy.set(false);
    }
  }
}
