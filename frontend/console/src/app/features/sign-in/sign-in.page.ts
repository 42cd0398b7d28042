import { ChangeDetectionStrategy, Component, inject, input, signal } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { Router, RouterLink } from '@angular/router';
import { problemOf } from '../../core/api';
import { Session } from '../../core/session';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { PasskeySignIn } from './passkey-sign-in';
import type { Problem } from '../../shared/problem';
import { ceremonyProblem } from './ceremony-problem';

/** Password, then a TOTP or recovery code when the account has a second factor; or a passkey, which is both. */
@Component({
  selector: 'pa-sign-in',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, RouterLink, ProblemViewComponent],
  styles: `form { max-width: 28rem; }`,
  template: `
    <h1>Sign in</h1>
    @if (!totpStep()) {
      <form (ngSubmit)="submitPassword()" aria-label="Sign in with password">
        <label for="email">E-mail</label>
        <input id="email" name="email" type="email" autocomplete="username" required [(ngModel)]="email" />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required [(ngModel)]="password" />
        <div class="actions"><button type="submit" [disabled]="busy()">Sign in</button></div>
      </form>
      @if (passkeys.supported) {
        <div class="actions">
          <button type="button" (click)="submitPasskey()" [disabled]="busy()">Sign in with a passkey</button>
        </div>
      }
    } @else {
      <form (ngSubmit)="submitCode()" aria-label="Second factor">
        <p>This account uses a second factor. Enter the six-digit code from your authenticator app, or a recovery code.</p>
        <label for="code">Code</label>
        <input id="code" name="code" autocomplete="one-time-code" inputmode="numeric" required [(ngModel)]="code" />
        <div class="actions"><button type="submit" [disabled]="busy()">Verify</button></div>
      </form>
    }
    <pa-problem [problem]="problem()" />
    <p class="hint">First time here? <a routerLink="/setup">Set up this installation</a> with the first-run token.</p>
  `,
})
export class SignInPage {
  private readonly session = inject(Session);
  private readonly router = inject(Router);
  protected readonly passkeys = inject(PasskeySignIn);
  readonly next = input<string | undefined>(undefined);
  protected email = '';
  protected password = '';
  protected code = '';
  protected readonly totpStep = signal(false);
  protected readonly busy = signal(false);
  protected readonly problem = signal<Problem | null>(null);

  protected async submitPassword(): Promise<void> {
    await this.attempt(async () => {
      const { totpRequired } = await this.session.signIn(this.email, this.password);
      this.password = '';
      if (totpRequired) this.totpStep.set(true);
      else await this.proceed();
    });
  }

  /** With the address typed in, only that account's passkeys are offered; without, any of this site's. */
  protected async submitPasskey(): Promise<void> {
    await this.attempt(async () => {
      await this.passkeys.signIn(this.email.trim() || undefined);
      this.password = '';
      await this.proceed();
    });
  }

  protected async submitCode(): Promise<void> {
    await this.attempt(async () => {
      await this.session.secondFactor(this.code.trim());
      await this.proceed();
    });
  }

  private async attempt(work: () => Promise<void>): Promise<void> {
    this.busy.set(true);
    this.problem.set(null);
    try {
      await work();
    } catch (error) {
      this.problem.set(ceremonyProblem(error) ?? problemOf(error));
    } finally {
      this.busy.set(false);
    }
  }

  private async proceed(): Promise<void> {
    // Only a path inside the console: an absolute URL in `next` would send the person elsewhere.
    const next = this.next();
    await this.router.navigateByUrl(next && next.startsWith('/') && !next.startsWith('//') ? next : '/');
  }
}
