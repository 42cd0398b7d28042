import { ChangeDetectionStrategy, Component, computed, input } from '@angular/core';
import { RouterLink } from '@angular/router';
import { BadgeComponent } from '../../shared/badge.component';
import { readinessLabel } from './missing-items';
import { scheduleInWords } from './schedule-words';
import type { Readiness, TemplateSummary } from './studio.api';

/** One template in the gallery: what it does, when, with which tools and credentials, and whether it could run here. */
@Component({
  selector: 'pa-studio-template-card',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [RouterLink, BadgeComponent],
  styles: `
    :host { display: block; height: 100%; }
    article { height: 100%; border: 1px solid var(--border); border-radius: var(--radius); background: #fff; padding: 0.75rem 1rem; display: flex; flex-direction: column; gap: 0.35rem; }
    h3 { margin: 0; font-size: 1.05rem; }
    p { margin: 0; }
    .meta { color: var(--muted); font-size: 0.85rem; }
    dl.facts { font-size: 0.9rem; margin-top: auto; }
    code { overflow-wrap: anywhere; }
  `,
  template: `
    <article [attr.aria-labelledby]="'template-' + template().id">
      <h3 [id]="'template-' + template().id"><a [routerLink]="['templates', template().id]">{{ template().title }}</a></h3>
      <p class="meta">{{ template().category }}</p>
      <p><pa-badge [text]="label().text" [kind]="label().tone" /></p>
      <p>{{ template().summary }}</p>
      <dl class="facts">
        <dt>Schedule</dt>
        <dd>{{ words() ?? 'On a schedule' }}@if (template().schedule; as cron) { (<code>{{ cron }}</code>)}</dd>
        <dt>Tools</dt>
        <dd>@for (tool of template().tools; track tool; let last = $last) {<code>{{ tool }}</code>@if (!last) {, }} @empty {none}</dd>
        <dt>Credentials</dt>
        <dd>@for (name of template().credentials; track name; let last = $last) {<code>{{ name }}</code>@if (!last) {, }} @empty {none needed}</dd>
      </dl>
    </article>
  `,
})
export class TemplateCardComponent {
  readonly template = input.required<TemplateSummary>();
  /** Undefined while it is being checked, null when it could not be. */
  readonly readiness = input<Readiness | null | undefined>(undefined);
  protected readonly words = computed(() => scheduleInWords(this.template().schedule));
  protected readonly label = computed(() => readinessLabel(this.readiness()));
}
