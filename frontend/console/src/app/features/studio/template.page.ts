import { ChangeDetectionStrategy, Component, computed, inject, input, signal, type OnInit } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { RouterLink } from '@angular/router';
import { ApiClient, problemOf } from '../../core/api';
import { Session } from '../../core/session';
import { loadable } from '../../shared/loadable';
import { issuesByPath, type Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { StateViewComponent } from '../../shared/state-view.component';
import { LaunchComponent } from './launch.component';
import { ReadinessViewComponent } from './readiness-view.component';
import { scheduleInWords } from './schedule-words';
import type { Instantiated, MadeWorker, TemplateDetail } from './studio.api';

/** One template: its definition as shipped, what this workspace lacks to run it, and making a worker (demo or real) from it. */
@Component({
  selector: 'pa-studio-template',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, RouterLink, StateViewComponent, ProblemViewComponent, ReadinessViewComponent, LaunchComponent],
  styles: `
    pre { white-space: pre-wrap; overflow-wrap: anywhere; }
    code { overflow-wrap: anywhere; }
  `,
  template: `
    <p><a [routerLink]="['/w', ws(), 'studio']">← Creation studio</a></p>
    <pa-state [of]="detail" what="the template">
      @if (detail.value(); as t) {
        <h1>{{ t.title }}</h1>
        <p>{{ t.summary }}</p>
        <dl class="facts">
          <dt>Category</dt><dd>{{ t.category }}</dd>
          <dt>Schedule</dt><dd>{{ words() ?? 'On a schedule' }}@if (t.schedule; as cron) { (<code>{{ cron }}</code>)}</dd>
          <dt>Tools</dt><dd>@for (tool of t.tools; track tool; let last = $last) {<code>{{ tool }}</code>@if (!last) {, }} @empty {none}</dd>
          <dt>Credentials it expects</dt><dd>@for (name of t.credentials; track name; let last = $last) {<code>{{ name }}</code>@if (!last) {, }} @empty {none}</dd>
          <dt>Template version</dt><dd>{{ t.version }}</dd>
        </dl>

        <section aria-labelledby="template-readiness-heading">
          <h2 id="template-readiness-heading">What this workspace lacks</h2>
          <pa-studio-readiness [readiness]="t.readiness" readyText="Nothing: a worker made from it could run here now." />
          <p class="hint">The demo needs none of it: it replays a scripted run, keeps only the grants that need no credential (@for (tool of t.demo.tools; track tool; let last = $last) {<code>{{ tool }}</code>@if (!last) {, }} @empty {none}) and is started by hand.</p>
        </section>

        @if (session.can('author')) {
          <section class="panel" aria-labelledby="make-heading">
            <h2 id="make-heading">Make a worker from it</h2>
            <form (ngSubmit)="make(false)">
              <label for="template-worker-name">Name</label>
              <input id="template-worker-name" name="name" required autocomplete="off" [ngModel]="name()" (ngModelChange)="name.set($event)" [attr.aria-invalid]="nameIssues().length ? 'true' : null" aria-describedby="template-worker-name-hint template-worker-name-error" />
              <p class="hint" id="template-worker-name-hint">Lower-case letters, digits and dashes, starting with a letter; not used by another worker of this workspace.</p>
              <div id="template-worker-name-error">
                @for (message of nameIssues(); track $index) { <p class="field-error">{{ message }}</p> }
              </div>
              <div class="actions">
                <button type="button" class="secondary" (click)="make(true)" [disabled]="busy()">Create demo worker</button>
                <button type="submit" [disabled]="busy()">Create worker</button>
              </div>
            </form>
            <pa-problem [problem]="problem()" [placed]="['name']" />
          </section>
        } @else {
          <p class="hint">Making a worker needs the member role or above in this workspace.</p>
        }

        <section aria-labelledby="definition-heading">
          <h2 id="definition-heading">Definition as shipped</h2>
          <pre tabindex="0" aria-label="Definition as shipped, read-only YAML" data-testid="template-definition">{{ t.definition }}</pre>
        </section>
      }
    </pa-state>

    @if (made(); as m) {
      <pa-studio-launch [made]="m" />
    }
  `,
})
export class TemplatePage implements OnInit {
  private readonly api = inject(ApiClient);
  protected readonly session = inject(Session);
  readonly templateId = input.required<string>();
  protected readonly ws = this.session.workspaceId;
  private readonly base = computed(() => `/api/v1/workspaces/${this.ws()}`);
  protected readonly detail = loadable(() => this.api.get<TemplateDetail>(`${this.base()}/templates/${encodeURIComponent(this.templateId())}`), false);
  protected readonly words = computed(() => scheduleInWords(this.detail.value()?.schedule ?? null));
  protected readonly name = signal('');
  protected readonly busy = signal(false);
  protected readonly problem = signal<Problem | null>(null);
  protected readonly nameIssues = computed(() => issuesByPath(this.problem()?.errors ?? []).get('name') ?? (this.problem()?.code === 'worker_name_taken' ? [this.problem()!.detail] : []));
  protected readonly made = signal<MadeWorker | null>(null);

  ngOnInit(): void {
    // Inputs bound from the route are set before ngOnInit, not in the constructor.
    this.name.set(this.templateId());
    void this.detail.reload();
  }

  protected async make(demo: boolean): Promise<void> {
    this.busy.set(true);
    this.problem.set(null);
    try {
      const answer = await this.api.post<Instantiated>(`${this.base()}/templates/${encodeURIComponent(this.templateId())}/instantiate`, { name: this.name().trim(), demo });
      this.made.set({
        workerId: answer.workerId,
        workerName: answer.workerName,
        version: answer.version,
        readiness: answer.readiness,
        exampleInput: answer.exampleInput ?? {},
        summary: `${demo ? 'Created demo worker' : 'Created worker'} ${answer.workerName}`,
      });
    } catch (error) {
      this.problem.set(problemOf(error));
    } finally {
      this.busy.set(false);
    }
  }
}
