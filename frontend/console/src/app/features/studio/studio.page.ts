import { ChangeDetectionStrategy, Component, computed, inject, signal } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { ApiClient, problemOf } from '../../core/api';
import { Session } from '../../core/session';
import { loadable } from '../../shared/loadable';
import type { Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { StateViewComponent } from '../../shared/state-view.component';
import { DraftResultComponent } from './draft-result.component';
import { DRAFT_PROVIDERS, draftModel, MODEL_CHOICES, type ModelChoiceValue } from './model-choice';
import type { Readiness, TemplateDetail, TemplateSummary, WorkerDraft } from './studio.api';
import { TemplateCardComponent } from './template-card.component';

/** The server's limit on a description (MAX_DRAFT_PROMPT_CHARS). */
const MAX_PROMPT_CHARS = 4000;

/** The creation studio: start from a template, or describe the worker and review a draft. */
@Component({
  selector: 'pa-studio',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, StateViewComponent, ProblemViewComponent, TemplateCardComponent, DraftResultComponent],
  styles: `
    .gallery { list-style: none; padding: 0; margin: 0 0 1rem; display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 18rem), 1fr)); gap: 0.75rem; }
    .row { display: flex; flex-wrap: wrap; gap: 0 1rem; }
    .row > div { flex: 1 1 12rem; min-width: 0; }
  `,
  template: `
    <h1>Creation studio</h1>
    <p>Make a worker from a starter template, or describe it in your own words and review the draft before saving it.</p>

    <section aria-labelledby="gallery-heading">
      <h2 id="gallery-heading">Start from a template</h2>
      <pa-state [of]="templates" what="templates" [empty]="(templates.value()?.items?.length ?? 0) === 0" emptyText="This server ships no templates.">
        @if (templates.value(); as list) {
          <ul class="gallery" aria-label="Templates">
            @for (t of list.items; track t.id) {
              <li><pa-studio-template-card [template]="t" [readiness]="readiness()[t.id]" /></li>
            }
          </ul>
        }
      </pa-state>
    </section>

    <section class="panel" aria-labelledby="describe-heading">
      <h2 id="describe-heading">Describe the worker</h2>
      @if (session.can('author')) {
        <form (ngSubmit)="draft()">
          <label for="draft-prompt">What should the worker do?</label>
          <textarea id="draft-prompt" name="prompt" required [maxlength]="maxPrompt" [ngModel]="prompt()" (ngModelChange)="prompt.set($event)" aria-describedby="draft-prompt-hint"></textarea>
          <p class="hint" id="draft-prompt-hint">Its job, when it runs, where it reads and what it may post or send. Nothing is saved until you save the draft. {{ prompt().length }} / {{ maxPrompt }} characters.</p>
          <label for="draft-model">Model that drafts</label>
          <select id="draft-model" name="model" [ngModel]="choice()" (ngModelChange)="choice.set($event)" aria-describedby="draft-model-hint">
            @for (option of choices; track option.value) { <option [value]="option.value">{{ option.label }}</option> }
          </select>
          <p class="hint" id="draft-model-hint">When the model is not ready here, the draft is built without a model, from the closest template, and labelled so.</p>
          @if (choice() === 'model') {
            <div class="row">
              <div>
                <label for="draft-provider">Provider</label>
                <select id="draft-provider" name="provider" [ngModel]="provider()" (ngModelChange)="provider.set($event)" [attr.aria-invalid]="choiceError()?.field === 'draft-provider' ? 'true' : null">
                  @for (p of providers; track p.value) { <option [value]="p.value">{{ p.label }}</option> }
                </select>
              </div>
              <div>
                <label for="draft-model-name">Model name</label>
                <input id="draft-model-name" name="modelName" autocomplete="off" [ngModel]="modelName()" (ngModelChange)="modelName.set($event)" [attr.aria-invalid]="choiceError()?.field === 'draft-model-name' ? 'true' : null" aria-describedby="draft-model-name-error" />
              </div>
            </div>
            <p class="field-error" id="draft-model-name-error" aria-live="polite">{{ choiceError()?.message ?? '' }}</p>
          }
          <div class="actions">
            <button type="submit" [disabled]="busy() || !prompt().trim()">Draft</button>
            @if (busy()) { <span role="status">Drafting… a model can take a minute.</span> }
          </div>
        </form>
        <pa-problem [problem]="problem()" />
      } @else {
        <p class="hint">Drafting a worker needs the member role or above in this workspace.</p>
      }
    </section>

    @if (result(); as d) {
      <pa-studio-draft [draft]="d" />
    }
  `,
})
export class StudioPage {
  private readonly api = inject(ApiClient);
  protected readonly session = inject(Session);
  private readonly base = computed(() => `/api/v1/workspaces/${this.session.workspaceId()}`);
  protected readonly templates = loadable(() => this.loadTemplates());
  /** Each template's readiness here, filled in as the details answer (null: the check failed). */
  protected readonly readiness = signal<Record<string, Readiness | null>>({});

  protected readonly maxPrompt = MAX_PROMPT_CHARS;
  protected readonly choices = MODEL_CHOICES;
  protected readonly providers = DRAFT_PROVIDERS;
  protected readonly prompt = signal('');
  protected readonly choice = signal<ModelChoiceValue>('preset:default');
  protected readonly provider = signal<string>(DRAFT_PROVIDERS[0].value);
  protected readonly modelName = signal('');
  protected readonly choiceError = signal<{ field: string; message: string } | null>(null);
  protected readonly busy = signal(false);
  protected readonly problem = signal<Problem | null>(null);
  protected readonly result = signal<WorkerDraft | null>(null);

  private async loadTemplates(): Promise<{ items: TemplateSummary[] }> {
    const list = await this.api.get<{ items: TemplateSummary[] }>(`${this.base()}/templates`);
    // The list does not say what this workspace lacks; each template's detail does.
    for (const item of list.items) {
      this.api.get<TemplateDetail>(`${this.base()}/templates/${encodeURIComponent(item.id)}`).then(
        (detail) => this.readiness.update((known) => ({ ...known, [item.id]: detail.readiness })),
        () => this.readiness.update((known) => ({ ...known, [item.id]: null })),
      );
    }
    return list;
  }

  protected async draft(): Promise<void> {
    const model = draftModel(this.choice(), this.provider(), this.modelName());
    this.choiceError.set(model.ok ? null : { field: model.field, message: model.message });
    if (!model.ok) {
      document.getElementById(model.field)?.focus();
      return;
    }
    this.busy.set(true);
    this.problem.set(null);
    try {
      this.result.set(await this.api.post<WorkerDraft>(`${this.base()}/workers/draft`, { prompt: this.prompt().trim(), model: model.model }));
    } catch (error) {
      this.problem.set(problemOf(error));
    } finally {
      this.busy.set(false);
    }
  }
}
