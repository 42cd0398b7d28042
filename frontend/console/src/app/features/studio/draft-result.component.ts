import { afterNextRender, ChangeDetectionStrategy, Component, computed, type ElementRef, effect, inject, Injector, input, linkedSignal, signal, untracked, viewChild } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { ApiClient, problemOf } from '../../core/api';
import { Session } from '../../core/session';
import { BadgeComponent } from '../../shared/badge.component';
import type { Problem, ProblemIssue } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { drafterView } from './drafter-view';
import { LaunchComponent } from './launch.component';
import { ReadinessViewComponent } from './readiness-view.component';
import type { Applied, DefinitionReadiness, MadeWorker, Readiness, WorkerDraft } from './studio.api';
import { definitionContentType } from './typed-input';

/** A drafted definition for review: who drafted it, what was taken out, the editable YAML with its issues, check and save. */
@Component({
  selector: 'pa-studio-draft',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, BadgeComponent, ProblemViewComponent, ReadinessViewComponent, LaunchComponent],
  styles: `
    .drafter { border-left: 4px solid var(--accent); padding: 0.5rem 0.75rem; background: #fff; margin: 0.5rem 0 1rem; }
    .drafter.builder { border-left-color: var(--warn); }
    .drafter h3 { margin-top: 0; }
    ul { padding-left: 1.25rem; }
    li { overflow-wrap: anywhere; }
  `,
  template: `
    <section class="panel" aria-labelledby="draft-heading">
      <h2 id="draft-heading" tabindex="-1" #heading>Draft for review</h2>
      <div class="drafter" [class.builder]="!drafter().byModel" data-testid="drafter">
        <h3>{{ drafter().title }}</h3>
        @if (!drafter().byModel) {
          <p>No model wrote this: it was built from a template and the words of the description. Read it before saving.</p>
        }
        <dl class="facts">
          @for (fact of drafter().facts; track fact.term) {
            <dt>{{ fact.term }}</dt>
            <dd>{{ fact.detail }}</dd>
          }
        </dl>
      </div>

      @if (draft().removedGrants.length) {
        <h3>Grants taken out</h3>
        <p class="hint">The description did not ask for them, so the draft does not grant them.</p>
        <ul aria-label="Grants taken out">
          @for (grant of draft().removedGrants; track grant.tool) {
            <li><code>{{ grant.tool }}</code>: {{ grant.reason }}</li>
          }
        </ul>
      }
      @if (draft().notes.length) {
        <h3>Notes</h3>
        <ul aria-label="Notes on the draft">
          @for (note of draft().notes; track $index) { <li>{{ note }}</li> }
        </ul>
      }

      <label for="draft-source">Definition (YAML)</label>
      <textarea id="draft-source" class="code" spellcheck="false" [ngModel]="source()" (ngModelChange)="edit($event)" [attr.aria-invalid]="errors().length ? 'true' : null" aria-describedby="draft-validity"></textarea>
      <div id="draft-validity" aria-live="polite">
        @if (errors().length) {
          <p><pa-badge [text]="errors().length === 1 ? '1 issue' : errors().length + ' issues'" kind="bad" /> Fix these before saving:</p>
          <ul class="error" aria-label="Issues in the definition">
            @for (issue of errors(); track $index) {
              <li><code>{{ issue.path || '(document)' }}</code> — {{ issue.message }}</li>
            }
          </ul>
        } @else if (edited()) {
          <p class="hint">Edited since it was checked: check it again to see its issues and readiness.</p>
        } @else {
          <p><pa-badge text="Valid" kind="ok" /> The definition is valid.</p>
        }
      </div>
      @if (!errors().length && !edited() && readiness(); as r) {
        <h3>Readiness</h3>
        <pa-studio-readiness [readiness]="r" intro="To run here, it would still need:" />
      }
      <pa-problem [problem]="problem()" [placed]="placed()" />
      @if (session.can('author')) {
        <div class="actions">
          <button type="button" class="secondary" (click)="check()" [disabled]="busy()">Check again</button>
          <button type="button" (click)="save()" [disabled]="busy()">Save</button>
        </div>
      } @else {
        <p class="hint">Saving a worker needs the member role or above.</p>
      }
    </section>
    @if (made(); as m) {
      <pa-studio-launch [made]="m" />
    }
  `,
})
export class DraftResultComponent {
  private readonly api = inject(ApiClient);
  private readonly injector = inject(Injector);
  protected readonly session = inject(Session);
  readonly draft = input.required<WorkerDraft>();
  private readonly heading = viewChild<ElementRef<HTMLElement>>('heading');

  protected readonly drafter = computed(() => drafterView(this.draft().drafter));
  protected readonly source = linkedSignal(() => this.draft().source);
  protected readonly errors = linkedSignal<WorkerDraft, ProblemIssue[]>({ source: this.draft, computation: (draft) => draft.errors });
  protected readonly readiness = linkedSignal<WorkerDraft, Readiness | null>({ source: this.draft, computation: (draft) => draft.readiness });
  protected readonly edited = linkedSignal<WorkerDraft, boolean>({ source: this.draft, computation: () => false });
  protected readonly problem = linkedSignal<WorkerDraft, Problem | null>({ source: this.draft, computation: () => null });
  protected readonly made = linkedSignal<WorkerDraft, MadeWorker | null>({ source: this.draft, computation: () => null });
  protected readonly busy = signal(false);
  /** The problem view lists only what the issue list above does not. */
  protected readonly placed = computed(() => this.errors().map((issue) => issue.path));
  private readonly base = computed(() => `/api/v1/workspaces/${this.session.workspaceId()}`);

  constructor() {
    effect(() => {
      this.draft();
      untracked(() => afterNextRender(() => this.heading()?.nativeElement.focus(), { injector: this.injector }));
    });
  }

  protected edit(text: string): void {
    this.source.set(text);
    this.edited.set(true);
  }

  protected async check(): Promise<void> {
    await this.act(async () => {
      const text = this.source();
      const answer = await this.api.request<DefinitionReadiness>('POST', `${this.base()}/workers/readiness`, { raw: { text, contentType: definitionContentType(text) } });
      this.errors.set([]);
      this.readiness.set(answer.readiness);
    });
  }

  protected async save(): Promise<void> {
    await this.act(async () => {
      const text = this.source();
      const applied = await this.api.request<Applied>('POST', `${this.base()}/workers/apply`, { raw: { text, contentType: definitionContentType(text) } });
      const [worker, readiness] = await Promise.all([
        this.api.get<{ name: string }>(`${this.base()}/workers/${applied.workerId}`),
        this.api.get<Readiness>(`${this.base()}/workers/${applied.workerId}/versions/${applied.version}/readiness`),
      ]);
      this.errors.set([]);
      this.readiness.set(readiness);
      const summary = applied.workerCreated ? `Created worker ${worker.name}` : applied.created ? `Saved ${worker.name} as version ${applied.version}` : `Unchanged: ${worker.name} is already version ${applied.version}`;
      this.made.set({ workerId: applied.workerId, workerName: worker.name, version: applied.version, readiness, exampleInput: null, summary });
    });
  }

  /** Runs a check or a save; a 400 puts its issues at their paths in the list, anything else shows as a problem. */
  private async act(work: () => Promise<void>): Promise<void> {
    this.busy.set(true);
    this.problem.set(null);
    try {
      await work();
      this.edited.set(false);
    } catch (error) {
      const problem = problemOf(error);
      if (problem.status === 400 && problem.errors.length) {
        this.errors.set(problem.errors);
        this.readiness.set(null);
        this.edited.set(false);
      }
      this.problem.set(problem);
    } finally {
      this.busy.set(false);
    }
  }
}
