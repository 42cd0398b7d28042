import { ChangeDetectionStrategy, Component, inject, signal } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { ApiClient, problemOf } from '../../core/api';
import { Directory } from '../../core/directory';
import { Session } from '../../core/session';
import { NameComponent } from '../../shared/name.component';
import { formatTime } from '../../shared/format';
import { loadable } from '../../shared/loadable';
import { issuesByPath, type Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { StateViewComponent } from '../../shared/state-view.component';

interface CredentialMetadata {
  name: string;
  version: number;
  keyId: string;
  createdBy: { kind: string; id: string };
  createdAt: string;
}

/** Write-only: a value goes in and never comes back; the list shows metadata only. */
@Component({
  selector: 'pa-credentials',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, StateViewComponent, ProblemViewComponent, NameComponent],
  template: `
    <h1>Credentials</h1>
    <pa-state [of]="list" what="credentials" [empty]="(list.value()?.items?.length ?? 0) === 0" emptyText="No credentials stored.">
      @if (list.value(); as page) {
        <div class="table-wrap" tabindex="0">
          <table>
            <thead><tr><th scope="col">Name</th><th scope="col">Version</th><th scope="col">Master key</th><th scope="col">Stored by</th><th scope="col">Stored</th>@if (session.can('admin')) {<th scope="col"><span class="visually-hidden">Actions</span></th>}</tr></thead>
            <tbody>
              @for (c of page.items; track c.name) {
                <tr>
                  <td><code>{{ c.name }}</code></td>
                  <td>{{ c.version }}</td>
                  <td><code>{{ c.keyId }}</code></td>
                  <td><pa-name [of]="names().actor(c.createdBy)" /></td>
                  <td>{{ time(c.createdAt) }}</td>
                  @if (session.can('admin')) {
                    <td><button type="button" class="danger" (click)="remove(c.name)" [disabled]="busy()" [attr.aria-label]="'Delete credential ' + c.name">Delete</button></td>
                  }
                </tr>
              }
            </tbody>
          </table>
        </div>
      }
    </pa-state>
    @if (session.can('admin')) {
      <section class="panel" aria-labelledby="store-heading">
        <h2 id="store-heading">Store a credential</h2>
        <p class="hint">Storing under an existing name adds a new version. The value is encrypted at rest and only ever handed to a run's tool through a single-use grant.</p>
        <form (ngSubmit)="store()" aria-label="Store a credential">
          <label for="credential-name">Name</label>
          <input id="credential-name" name="name" required [(ngModel)]="name" autocomplete="off" />
          @for (message of issues('name'); track $index) { <p class="field-error">{{ message }}</p> }
          <label for="credential-value">Value</label>
          <input id="credential-value" name="value" type="password" required [(ngModel)]="value" autocomplete="off" />
          @for (message of issues('value'); track $index) { <p class="field-error">{{ message }}</p> }
          <div class="actions"><button type="submit" [disabled]="busy()">Store</button></div>
        </form>
      </section>
    }
    <pa-problem [problem]="problem()" [placed]="['name', 'value']" />
    @if (done(); as text) { <p role="status">{{ text }}</p> }
  `,
})
export class CredentialsPage {
  private readonly api = inject(ApiClient);
  protected readonly session = inject(Session);
  private readonly directory = inject(Directory);
  protected readonly names = this.directory.names;
  constructor() {
    void this.directory.ensure();
  }
  private readonly base = () => `/api/v1/workspaces/${this.session.workspaceId()}/credentials`;
  protected readonly list = loadable(() => this.api.get<{ items: CredentialMetadata[] }>(this.base()));
  protected name = '';
  protected value = '';
  protected readonly busy = signal(false);
  protected readonly problem = signal<Problem | null>(null);
  protected readonly done = signal<string | null>(null);
  protected readonly time = formatTime;

  protected issues(path: string): string[] {
    return issuesByPath(this.problem()?.errors ?? []).get(path) ?? [];
  }

  protected store(): Promise<void> {
    const name = this.name.trim();
    return this.act(async () => {
      const stored = await this.api.put<CredentialMetadata>(`${this.base()}/${encodeURIComponent(name)}`, { value: this.value });
      // The value leaves the page as soon as it is stored.
      this.value = '';
      this.name = '';
      return `Stored ${stored.name} version ${stored.version}.`;
    });
  }

  protected remove(name: string): Promise<void> {
    return this.act(async () => {
      await this.api.delete(`${this.base()}/${encodeURIComponent(name)}`);
      return `Deleted ${name}.`;
    });
  }

  private async act(work: () => Promise<string>): Promise<void> {
    this.busy.set(true);
    this.problem.set(null);
    this.done.set(null);
    try {
      this.done.set(await work());
      await this.list.reload(true);
    } catch (error) {
      this.problem.set(problemOf(error));
    } finally {
      this.busy.set(false);
    }
  }
}
