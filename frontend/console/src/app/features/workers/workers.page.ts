import { ChangeDetectionStrategy, Component, inject, signal } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { Router, RouterLink } from '@angular/router';
import { ApiClient, problemOf } from '../../core/api';
import { Session } from '../../core/session';
import { formatTime } from '../../shared/format';
import { loadable } from '../../shared/loadable';
import { issuesByPath, type Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { StateViewComponent } from '../../shared/state-view.component';
import type { Page, WorkerSummary } from './workers.api';

@Component({
  selector: 'pa-workers',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, RouterLink, StateViewComponent, ProblemViewComponent],
  template: `
    <h1>Workers</h1>
    @if (session.can('author')) {
      <p><a class="button" [routerLink]="['/w', session.workspaceId(), 'studio']">New worker</a> <span class="hint">from a template or a description, in the creation studio</span></p>
    }
    <pa-state [of]="workers" what="workers" [empty]="(workers.value()?.items?.length ?? 0) === 0" emptyText="No workers yet. Create one below, then add its definition as a first version.">
      @if (workers.value(); as page) {
        <div class="table-wrap" tabindex="0">
          <table>
            <thead><tr><th scope="col">Name</th><th scope="col">Description</th><th scope="col">Latest version</th><th scope="col">Created</th></tr></thead>
            <tbody>
              @for (w of page.items; track w.id) {
                <tr>
                  <td><a [routerLink]="[w.id]">{{ w.name }}</a></td>
                  <td>{{ w.description }}</td>
                  <td>{{ w.latestVersion || 'none' }}</td>
                  <td>{{ time(w.createdAt) }}</td>
                </tr>
              }
            </tbody>
          </table>
        </div>
      }
    </pa-state>
    @if (session.can('author')) {
      <section class="panel" aria-labelledby="create-heading">
        <h2 id="create-heading">New worker</h2>
        <form (ngSubmit)="create()">
          <label for="worker-name">Name</label>
          <input id="worker-name" name="name" required [(ngModel)]="name" aria-describedby="worker-name-hint" />
          <p class="hint" id="worker-name-hint">Lower-case letters, digits and dashes; it must match the definition's <code>name</code>.</p>
          @for (message of issues('name'); track $index) { <p class="field-error">{{ message }}</p> }
          <label for="worker-description">Description</label>
          <input id="worker-description" name="description" [(ngModel)]="description" />
          <div class="actions"><button type="submit" [disabled]="busy()">Create worker</button></div>
        </form>
        <pa-problem [problem]="problem()" [placed]="['name']" />
      </section>
    }
  `,
})
export class WorkersPage {
  private readonly api = inject(ApiClient);
  private readonly router = inject(Router);
  protected readonly session = inject(Session);
  protected readonly workers = loadable(() => this.api.get<Page<WorkerSummary>>(`/api/v1/workspaces/${this.session.workspaceId()}/workers?limit=200`));
  protected readonly time = formatTime;
  protected name = '';
  protected description = '';
  protected readonly busy = signal(false);
  protected readonly problem = signal<Problem | null>(null);

  protected issues(path: string): string[] {
    return issuesByPath(this.problem()?.errors ?? []).get(path) ?? [];
  }

  protected async create(): Promise<void> {
    this.busy.set(true);
    this.problem.set(null);
    try {
      const created = await this.api.post<{ id: string }>(`/api/v1/workspaces/${this.session.workspaceId()}/workers`, { name: this.name.trim(), description: this.description });
      await this.router.navigate(['/w', this.session.workspaceId(), 'workers', created.id]);
    } catch (error) {
      this.problem.set(problemOf(error));
    } finally {
      this.busy.set(false);
    }
  }
}
