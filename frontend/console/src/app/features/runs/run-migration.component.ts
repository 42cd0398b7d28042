import { ChangeDetectionStrategy, Component, computed, inject, input, output, signal, type OnInit } from '@angular/core';
import { ApiClient, problemOf } from '../../core/api';
import { BadgeComponent } from '../../shared/badge.component';
import { loadable } from '../../shared/loadable';
import type { Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { StateViewComponent } from '../../shared/state-view.component';
import type { Deployment } from '../workers/workers.api';
import { describeMigration, migrationTarget, type RunMigrationResult } from './run-migration';
import type { Run } from './runs.api';

/**
 * A waiting run whose deployment now pins a newer version: compare first (a dry run replays the
 * run's history under both versions), then move it on a second click. The page shows this only
 * to a role with deployment-control; the server checks it on every call.
 */
@Component({
  selector: 'pa-run-migration',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [StateViewComponent, ProblemViewComponent, BadgeComponent],
  styles: `
    section.migration { border-left: 3px solid var(--border); padding: 0.25rem 0.75rem; margin: 0.75rem 0; }
    ul.divergence { margin: 0.25rem 0; padding-left: 1.25rem; white-space: pre-wrap; }
  `,
  template: `
    <section class="migration" aria-labelledby="migration-heading" data-testid="migration">
      <h2 id="migration-heading">Version</h2>
      <pa-state [of]="deployment" what="the run's deployment" [empty]="target() === null && result() === null" [emptyText]="upToDate()">
        @if (target(); as version) {
          <p>The deployment now pins version {{ version }}; this run is on version {{ run().version }}.</p>
        }
        @if (result(); as found) {
          <p data-testid="migration-result"><pa-badge [text]="outcomeText(found)" [kind]="described()!.tone" /> {{ described()!.title }}</p>
          @if (described()!.detail.length) {
            <ul class="divergence" data-testid="migration-divergence">
              @for (line of described()!.detail; track $index) { <li>{{ line }}</li> }
            </ul>
          }
        }
        @if (target(); as version) {
          <div class="actions">
            @if (result()?.outcome === 'would_migrate') {
              <button type="button" (click)="migrate(version)" [disabled]="busy()">Migrate to version {{ version }}</button>
              <button type="button" class="secondary" (click)="result.set(null)" [disabled]="busy()">Cancel</button>
            } @else if (result()?.outcome !== 'migrated') {
              <button type="button" class="secondary" (click)="compare(version)" [disabled]="busy()">Migrate to version {{ version }}…</button>
              <span class="hint">Compares the run's decisions under both versions first; nothing moves until you confirm.</span>
            }
            @if (busy()) { <span class="hint" role="status">Replaying the run's history…</span> }
          </div>
        }
        <pa-problem [problem]="problem()" />
      </pa-state>
    </section>
  `,
})
export class RunMigrationComponent implements OnInit {
  private readonly api = inject(ApiClient);
  readonly run = input.required<Run>();
  readonly workspaceId = input.required<string>();
  /** After the run moved: the page reloads the run and its timeline. */
  readonly migrated = output<RunMigrationResult>();

  private readonly workspacePath = () => `/api/v1/workspaces/${this.workspaceId()}`;
  protected readonly deployment = loadable(() => this.api.get<Deployment>(`${this.workspacePath()}/deployments/${encodeURIComponent(this.run().deploymentId)}`), false);
  protected readonly target = computed(() => migrationTarget(this.run().version, this.deployment.value()?.version));
  protected readonly result = signal<RunMigrationResult | null>(null);
  protected readonly described = computed(() => {
    const result = this.result();
    return result ? describeMigration(result) : null;
  });
  protected readonly upToDate = computed(() => `The run is on its deployment's version (${this.run().version}): nothing to migrate to.`);
  protected readonly outcomeText = (result: RunMigrationResult) => result.outcome.replace('_', ' ');
  protected readonly problem = signal<Problem | null>(null);
  protected readonly busy = signal(false);

  ngOnInit(): void {
    void this.deployment.reload();
  }

  protected compare(version: number): Promise<void> {
    return this.send(version, true);
  }

  protected async migrate(version: number): Promise<void> {
    await this.send(version, false);
    const result = this.result();
    if (result?.outcome === 'migrated') this.migrated.emit(result);
  }

  private async send(version: number, dryRun: boolean): Promise<void> {
    this.busy.set(true);
    this.problem.set(null);
    try {
      this.result.set(await this.api.post<RunMigrationResult>(`${this.workspacePath()}/runs/${encodeURIComponent(this.run().id)}/migrate`, { version, dryRun }));
    } catch (error) {
      this.result.set(null);
      this.problem.set(problemOf(error));
    } finally {
      this.busy.set(false);
    }
  }
}
