import { ChangeDetectionStrategy, Component, inject, signal } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { Router, RouterLink } from '@angular/router';
import { ApiClient, problemOf } from '../../core/api';
import { Session } from '../../core/session';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { issuesByPath, type Problem } from '../../shared/problem';

/** First run: the token from <dataDir>/setup-token creates the owner and the first workspace. */
@Component({
  selector: 'pa-setup',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, ProblemViewComponent, RouterLink],
  styles: `form { max-width: 32rem; }`,
  template: `
    <h1>First-run setup</h1>
    @if (apiKey()) {
      <p>Setup is complete and you are signed in as the owner.</p>
      <h2>Owner API key</h2>
      <p>For the command line and automation. It is shown this once: store it now.</p>
      <p class="secret" data-testid="owner-api-key"><code>{{ apiKey() }}</code></p>
      <div class="actions"><button type="button" (click)="continue()">Continue to the console</button></div>
    } @else if (status() === 'checking') {
      <p class="state" role="status">Checking whether this installation is set up…</p>
    } @else if (status() === 'complete') {
      <p data-testid="setup-complete">This installation is set up: its owner and first workspace exist, and the setup token has been used.</p>
      @if (signedIn()) {
        <div class="actions"><a class="button" routerLink="/">Go to the console</a></div>
      } @else {
        <div class="actions"><a class="button" routerLink="/sign-in">Sign in</a></div>
      }
      <p class="hint">New people join through a workspace's owner or admin; a lost owner password is reset from the server's command line.</p>
    } @else {
      <p>Creates the owner account and the first workspace. The setup token is in <code>setup-token</code> under the data directory, and in the server's log at first start; it works once.</p>
      <form (ngSubmit)="submit()" aria-label="First-run setup">
        <label for="token">Setup token</label>
        <input id="token" name="token" autocomplete="off" required [(ngModel)]="token" />
        @for (message of fieldIssues('token'); track $index) { <p class="field-error">{{ message }}</p> }
        <label for="email">Owner e-mail</label>
        <input id="email" name="email" type="email" autocomplete="username" required [(ngModel)]="email" />
        @for (message of fieldIssues('email'); track $index) { <p class="field-error">{{ message }}</p> }
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="new-password" required [(ngModel)]="password" aria-describedby="password-hint" />
        <p class="hint" id="password-hint">A long passphrase; it is checked against the server's password rules.</p>
        @for (message of fieldIssues('password'); track $index) { <p class="field-error">{{ message }}</p> }
        <label for="workspace">First workspace</label>
        <input id="workspace" name="workspace" required [(ngModel)]="workspace" />
        @for (message of fieldIssues('workspace'); track $index) { <p class="field-error">{{ message }}</p> }
        <div class="actions"><button type="submit" [disabled]="busy()">Set up</button></div>
      </form>
      <pa-problem [problem]="problem()" [placed]="['token', 'email', 'password', 'workspace']" />
    }
  `,
})
export class SetupPage {
  private readonly api = inject(ApiClient);
  private readonly session = inject(Session);
  private readonly router = inject(Router);
  protected token = '';
  protected email = '';
  protected password = '';
  protected workspace = '';
  protected readonly busy = signal(false);
  protected readonly problem = signal<Problem | null>(null);
  protected readonly apiKey = signal<string | null>(null);
  /** Whether setup was done already: then the form could only fail, so the page says so instead. */
  protected readonly status = signal<'checking' | 'open' | 'complete'>('checking');
  protected readonly signedIn = signal(false);
  private workspaceId = '';

  constructor() {
    void this.check();
  }

  private async check(): Promise<void> {
    try {
      const answer = await this.api.get<{ complete: boolean }>('/api/v1/setup/status');
      if (answer.complete) this.signedIn.set((await this.session.load().catch(() => null)) !== null);
      this.status.set(answer.complete ? 'complete' : 'open');
    } catch {
      // Without an answer the form stays usable: the server refuses it if setup is done.
      this.status.set('open');
    }
  }

  protected fieldIssues(path: string): string[] {
    return issuesByPath(this.problem()?.errors ?? []).get(path) ?? [];
  }

  protected async submit(): Promise<void> {
    this.busy.set(true);
    this.problem.set(null);
    try {
      const answer = await this.api.post<{ workspaceId: string; apiKey: string }>('/api/v1/setup', {
        token: this.token.trim(),
        email: this.email,
        password: this.password,
        workspace: this.workspace,
      });
      this.workspaceId = answer.workspaceId;
      // The same credentials sign in at once; a second factor can be enrolled from Admin.
      await this.session.signIn(this.email, this.password);
      this.password = '';
      this.apiKey.set(answer.apiKey);
    } catch (error) {
      const problem = problemOf(error);
      if (problem.code === 'setup_completed') this.status.set('complete');
      this.problem.set(problem);
    } finally {
      this.busy.set(false);
    }
  }

  protected continue(): void {
    this.apiKey.set(null);
    void this.router.navigate(['/w', this.workspaceId, 'overview']);
  }
}
