import { ChangeDetectionStrategy, Component, computed, inject, input } from '@angular/core';
import { RouterLink } from '@angular/router';
import { Session } from '../../core/session';
import { BadgeComponent } from '../../shared/badge.component';
import { groupMissing, readinessLabel } from './missing-items';
import type { MissingItem, Readiness } from './studio.api';

/** What a definition lacks to run in this workspace: each missing item with its reason, credentials linked to the vault page. */
@Component({
  selector: 'pa-studio-readiness',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [RouterLink, BadgeComponent],
  styles: `
    ul { margin: 0.25rem 0 0.75rem; padding-left: 1.25rem; }
    li { margin: 0.2rem 0; overflow-wrap: anywhere; }
    h4 { margin: 0.75rem 0 0.25rem; font-size: 0.95rem; }
  `,
  template: `
    <p><pa-badge [text]="label().text" [kind]="label().tone" /></p>
    @if (groups().length) {
      <p>{{ intro() }}</p>
      @for (group of groups(); track group.kind) {
        <h4>{{ group.heading }}</h4>
        <ul [attr.aria-label]="group.heading + ' missing'">
          @for (item of group.items; track item.name) {
            <li>
              <code>{{ item.name }}</code>: {{ item.reason }}
              @if (item.kind === 'credential') {
                — <a [routerLink]="['/w', session.workspaceId(), 'credentials']">store {{ item.name }} in Credentials</a>
              }
            </li>
          }
        </ul>
      }
    } @else if (readiness()?.ready) {
      <p>{{ readyText() }}</p>
    }
  `,
})
export class ReadinessViewComponent {
  protected readonly session = inject(Session);
  readonly readiness = input<Readiness | null>(null);
  /** Missing items to show instead of the readiness' own (a deployment refusal's). */
  readonly missing = input<readonly MissingItem[] | null>(null);
  readonly intro = input('This workspace lacks:');
  readonly readyText = input('Everything it needs is here: credentials, model providers, tools and computers.');
  protected readonly label = computed(() => {
    const missing = this.missing();
    return missing ? readinessLabel({ ready: missing.length === 0, missing }) : readinessLabel(this.readiness());
  });
  protected readonly groups = computed(() => groupMissing(this.missing() ?? this.readiness()?.missing ?? []));
}
