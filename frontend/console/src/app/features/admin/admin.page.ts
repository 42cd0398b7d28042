import { ChangeDetectionStrategy, Component, inject, signal } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { Router } from '@angular/router';
import { ApiClient, problemOf } from '../../core/api';
import { Directory } from '../../core/directory';
import { NameComponent } from '../../shared/name.component';
import { Session, type Role } from '../../core/session';
import { BadgeComponent } from '../../shared/badge.component';
import { formatTime } from '../../shared/format';
import { Loadable } from '../../shared/loadable';
import { issuesByPath, type Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { StateViewComponent } from '../../shared/state-view.component';

interface ApiKey {
  id: string;
  name: string;
  role: Role;
  prefix: string;
  createdAt: string;
  createdBy: { kind: string; id: string };
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

/** API keys of the workspace, your memberships and second factor, and new workspaces. */
@Component({
  selector: 'pa-admin',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, StateViewComponent, ProblemViewComponent, BadgeComponent, NameComponent],
  template: `
    <h1>Administration</h1>
    <section aria-labelledby="keys-heading">
      <h2 id="keys-heading">API keys</h2>
      @if (session.can('admin')) {
        <pa-state [of]="keys" what="API keys" [empty]="(keys.value()?.items?.length ?? 0) === 0" emptyText="No API keys.">
          @if (keys.value(); as page) {
            <div class="table-wrap" tabindex="0">
              <table>
                <thead><tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Prefix</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
                <tbody>
                  @for (k of page.items; track k.id) {
                    <tr>
                      <td>{{ k.name }}</td>
                      <td>{{ k.role }}</td>
                      <td><code>{{ k.prefix }}</code></td>
                      <td>{{ time(k.createdAt) }}<br /><span class="hint">by <pa-name [of]="names().actor(k.createdBy)" /></span></td>
                      <td>{{ time(k.lastUsedAt) }}</td>
                      <td>{{ k.expiresAt ? time(k.expiresAt) : 'never' }}</td>
                      <td>@if (k.revokedAt) { <pa-badge text="revoked" kind="bad" /> } @else { <pa-badge text="active" kind="ok" /> }</td>
                      <td>@if (!k.revokedAt) { <button type="button" class="danger" (click)="revoke(k)" [disabled]="busy()" [attr.aria-label]="'Revoke API key ' + k.name">Revoke</button> }</td>
                    </tr>
                  }
                </tbody>
              </table>
            </div>
          }
        </pa-state>
        <form class="panel" (ngSubmit)="createKey()" aria-label="Create an API key">
          <h3>New API key</h3>
          <label for="key-name">Name</label>
          <input id="key-name" name="keyName" required [(ngModel)]="keyName" />
          @for (m of issues('name'); track $index) { <p class="field-error">{{ m }}</p> }
          <label for="key-role">Role</label>
          <select id="key-role" name="keyRole" [(ngModel)]="keyRole">
            @for (r of roles; track r) { <option [value]="r">{{ r }}</option> }
          </select>
          @for (m of issues('role'); track $index) { <p class="field-error">{{ m }}</p> }
          <label for="key-expiry">Expires (optional)</label>
          <input id="key-expiry" name="keyExpiry" type="date" [(ngModel)]="keyExpiry" />
          @for (m of issues('expiresAt'); track $index) { <p class="field-error">{{ m }}</p> }
          <div class="actions"><button type="submit" [disabled]="busy()">Create key</button></div>
          @if (newSecret(); as secret) {
            <p>The key, shown this once:</p>
            <p class="secret"><code>{{ secret }}</code></p>
          }
        </form>
      } @else {
        <p class="state">Managing API keys needs the admin role in this workspace.</p>
      }
    </section>

    <section aria-labelledby="members-heading">
      <h2 id="members-heading">Your workspaces and roles</h2>
      <p class="hint">The API grants roles through workspace creation (the creator is owner) and API keys; it has no routes yet to invite or change other members.</p>
      <div class="table-wrap" tabindex="0">
        <table>
          <thead><tr><th scope="col">Workspace</th><th scope="col">Id</th><th scope="col">Your role</th></tr></thead>
          <tbody>
            @for (w of session.caller()?.workspaces ?? []; track w.id) {
              <tr><td>{{ w.name }}</td><td><code>{{ w.id }}</code></td><td>{{ w.role }}</td></tr>
            }
          </tbody>
        </table>
      </div>
      @if (session.caller()?.kind === 'user') {
        <form class="panel" (ngSubmit)="createWorkspace()" aria-label="Create a workspace">
          <h3>New workspace</h3>
          <label for="workspace-name">Name</label>
          <input id="workspace-name" name="workspaceName" required [(ngModel)]="workspaceName" />
          <div class="actions"><button type="submit" [disabled]="busy()">Create workspace</button></div>
        </form>
      }
    </section>

    @if (session.caller()?.kind === 'user') {
      <section aria-labelledby="totp-heading">
        <h2 id="totp-heading">Second factor</h2>
        @if (session.caller()?.totpEnabled) {
          <p><pa-badge text="enabled" kind="ok" /> Sign-in asks for a code from your authenticator app.</p>
        } @else if (!enrolment()) {
          <p>Sign-in asks for a password only. Add an authenticator app (TOTP) for a second factor.</p>
          <div class="actions"><button type="button" class="secondary" (click)="enrol()" [disabled]="busy()">Set up an authenticator</button></div>
        }
        @if (enrolment(); as e) {
          @if (!recoveryCodes()) {
            <p>Add this seed to your authenticator app (shown this once), then enter the code it shows.</p>
            <p class="secret">Seed: <code>{{ e.secret }}</code><br />URI: <code>{{ e.otpauthUri }}</code></p>
            <form (ngSubmit)="verifyTotp()" aria-label="Confirm the authenticator">
              <label for="totp-code">Six-digit code</label>
              <input id="totp-code" name="totpCode" inputmode="numeric" autocomplete="one-time-code" required [(ngModel)]="totpCode" />
              <div class="actions"><button type="submit" [disabled]="busy()">Enable</button></div>
            </form>
          } @else {
            <p>Enabled. Recovery codes, each usable once if the authenticator is lost (shown this once):</p>
            <pre class="secret">{{ recoveryCodes()!.join('\n') }}</pre>
          }
        }
      </section>
    }
    <pa-problem [problem]="problem()" [placed]="['name', 'role', 'expiresAt']" />
    @if (done(); as text) { <p role="status">{{ text }}</p> }
  `,
})
export class AdminPage {
  private readonly api = inject(ApiClient);
  private readonly router = inject(Router);
  protected readonly session = inject(Session);
  private readonly directory = inject(Directory);
  protected readonly names = this.directory.names;
  private readonly base = () => `/api/v1/workspaces/${this.session.workspaceId()}`;
  protected readonly keys = new Loadable(() => this.api.get<{ items: ApiKey[] }>(`${this.base()}/api-keys`));
  protected readonly roles: Role[] = ['viewer', 'member', 'admin', 'owner'];
  protected keyName = '';
  protected keyRole: Role = 'viewer';
  protected keyExpiry = '';
  protected workspaceName = '';
  protected totpCode = '';
  protected readonly newSecret = signal<string | null>(null);
  protected readonly enrolment = signal<{ otpauthUri: string; secret: string } | null>(null);
  protected readonly recoveryCodes = signal<string[] | null>(null);
  protected readonly busy = signal(false);
  protected readonly problem = signal<Problem | null>(null);
  protected readonly done = signal<string | null>(null);
  protected readonly time = formatTime;

  constructor() {
    // Without the admin role the list answers 403: not asked, so the page shows no error for it.
    if (this.session.can('admin')) void this.keys.reload();
    void this.directory.ensure();
  }

  protected issues(path: string): string[] {
    return issuesByPath(this.problem()?.errors ?? []).get(path) ?? [];
  }

  protected createKey(): Promise<void> {
    return this.act(async () => {
      const body = { name: this.keyName.trim(), role: this.keyRole, ...(this.keyExpiry ? { expiresAt: new Date(`${this.keyExpiry}T23:59:59Z`).toISOString() } : {}) };
      const created = await this.api.post<{ secret: string; name: string }>(`${this.base()}/api-keys`, body);
      this.newSecret.set(created.secret);
      this.keyName = '';
      await this.keys.reload(true);
      return `Created API key ${created.name}.`;
    });
  }

  protected revoke(key: ApiKey): Promise<void> {
    return this.act(async () => {
      await this.api.delete(`${this.base()}/api-keys/${encodeURIComponent(key.id)}`);
      await this.keys.reload(true);
      return `Revoked API key ${key.name}.`;
    });
  }

  protected createWorkspace(): Promise<void> {
    return this.act(async () => {
      const created = await this.api.post<{ id: string }>('/api/v1/workspaces', { name: this.workspaceName.trim() });
      await this.session.load(true);
      await this.router.navigate(['/w', created.id, 'overview']);
      return 'Workspace created.';
    });
  }

  protected enrol(): Promise<void> {
    return this.act(async () => {
      this.enrolment.set(await this.api.post<{ otpauthUri: string; secret: string }>('/api/v1/auth/totp/enrol'));
      return 'Seed created.';
    });
  }

  protected verifyTotp(): Promise<void> {
    return this.act(async () => {
      const answer = await this.api.post<{ recoveryCodes: string[] }>('/api/v1/auth/totp/verify', { code: this.totpCode.trim() });
      this.recoveryCodes.set(answer.recoveryCodes);
      await this.session.load(true);
      return 'Second factor enabled.';
    });
  }

  private async act(work: () => Promise<string>): Promise<void> {
    this.busy.set(true);
    this.problem.set(null);
    this.done.set(null);
    try {
      this.done.set(await work());
    } catch (error) {
      this.problem.set(problemOf(error));
    } finally {
      this.busy.set(false);
    }
  }
}
