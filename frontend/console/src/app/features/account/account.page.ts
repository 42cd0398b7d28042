import { ChangeDetectionStrategy, Component, inject, signal } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { problemOf } from '../../core/api';
import { Session } from '../../core/session';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import type { Problem } from '../../shared/problem';
import { PasskeySignIn } from '../sign-in/passkey-sign-in';
import { ceremonyProblem } from '../sign-in/ceremony-problem';
import { PasskeysApi, type Passkey } from './passkeys.api';

/** The signed-in person's sign-in methods: their passkeys, listed, added, renamed and removed. */
@Component({
  selector: 'pa-account',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, ProblemViewComponent],
  styles: `
    form { max-width: 32rem; }
    table { border-collapse: collapse; width: 100%; max-width: 60rem; }
    th, td { text-align: left; padding: 0.4rem 0.6rem; border-bottom: 1px solid var(--border); vertical-align: middle; }
    td input { max-width: 14rem; }
    .warning { color: #8a1f11; }
  `,
  template: `
    <h1>Your account</h1>
    <p>Signed in as <strong>{{ session.caller()?.email }}</strong>.</p>

    <h2>Passkeys</h2>
    <p>A passkey signs you in with your device's screen lock or security key instead of a password and code.</p>
    @if (!passkeySignIn.supported) {
      <p role="status">This browser does not support passkeys.</p>
    }
    @if (loading()) {
      <p role="status">Loading passkeys…</p>
    } @else if (passkeys().length === 0) {
      <p>No passkeys yet.</p>
    } @else {
      <table aria-label="Your passkeys">
        <thead><tr><th scope="col">Name</th><th scope="col">Added</th><th scope="col">Last used</th><th scope="col">Actions</th></tr></thead>
        <tbody>
          @for (passkey of passkeys(); track passkey.id) {
            <tr>
              <td>
                @if (editing() === passkey.id) {
                  <input [attr.aria-label]="'New name for ' + passkey.name" [(ngModel)]="draftName" name="draft-{{ passkey.id }}" maxlength="100" />
                } @else {
                  {{ passkey.name }}
                  @if (passkey.synced) { <small>(synced)</small> }
                  @if (passkey.lastCounterRegressionAt) {
                    <div class="warning">A copy of this passkey may exist: a sign-in was refused on {{ when(passkey.lastCounterRegressionAt) }}.</div>
                  }
                }
              </td>
              <td>{{ when(passkey.createdAt) }}</td>
              <td>{{ passkey.lastUsedAt ? when(passkey.lastUsedAt) : 'never' }}</td>
              <td>
                @if (editing() === passkey.id) {
                  <button type="button" (click)="saveName(passkey)" [disabled]="busy()">Save</button>
                  <button type="button" (click)="editing.set(null)">Cancel</button>
                } @else {
                  <button type="button" (click)="startEditing(passkey)" [attr.aria-label]="'Rename ' + passkey.name">Rename</button>
                  <button type="button" (click)="remove(passkey)" [disabled]="busy()" [attr.aria-label]="'Remove ' + passkey.name">Remove</button>
                }
              </td>
            </tr>
          }
        </tbody>
      </table>
    }

    @if (passkeySignIn.supported) {
      <form (ngSubmit)="add()" aria-label="Add a passkey">
        <label for="passkey-name">Passkey name</label>
        <input id="passkey-name" name="passkey-name" required maxlength="100" placeholder="e.g. Work laptop" [(ngModel)]="newName" />
        <div class="actions"><button type="submit" [disabled]="busy() || !newName.trim()">Add a passkey</button></div>
      </form>
    }

    @if (confirming()) {
      <form (ngSubmit)="confirmWithPassword()" aria-label="Confirm it is you">
        <p>Changing your passkeys needs you to confirm it is you.</p>
        <label for="confirm-password">Password</label>
        <input id="confirm-password" name="confirm-password" type="password" autocomplete="current-password" required [(ngModel)]="confirmPassword" />
        @if (session.caller()?.totpEnabled) {
          <label for="confirm-code">Authenticator or recovery code</label>
          <input id="confirm-code" name="confirm-code" autocomplete="one-time-code" required [(ngModel)]="confirmCode" />
        }
        <div class="actions">
          <button type="submit" [disabled]="busy()">Confirm</button>
          @if (passkeySignIn.supported && passkeys().length > 0) {
            <button type="button" (click)="confirmWithPasskey()" [disabled]="busy()">Confirm with a passkey</button>
          }
          <button type="button" (click)="cancelConfirm()">Cancel</button>
        </div>
      </form>
    }
    <pa-problem [problem]="problem()" />
    @if (notice(); as text) {
      <p role="status">{{ text }}</p>
    }
  `,
})
export class AccountPage {
  protected readonly session = inject(Session);
  protected readonly passkeySignIn = inject(PasskeySignIn);
  private readonly api = inject(PasskeysApi);
  protected readonly passkeys = signal<Passkey[]>([]);
  protected readonly loading = signal(true);
  protected readonly busy = signal(false);
  protected readonly problem = signal<Problem | null>(null);
  protected readonly notice = signal<string | null>(null);
  protected readonly editing = signal<string | null>(null);
  /** Set while a change waits for the person to confirm it is them; run again afterwards. */
  protected readonly confirming = signal<(() => Promise<void>) | null>(null);
  protected newName = '';
  protected draftName = '';
  protected confirmPassword = '';
  protected confirmCode = '';

  constructor() {
    void this.reload();
  }

  protected when(iso: string): string {
    return new Date(iso).toLocaleString();
  }

  protected startEditing(passkey: Passkey): void {
    this.draftName = passkey.name;
    this.editing.set(passkey.id);
  }

  protected add(): Promise<void> {
    const name = this.newName.trim();
    return this.change(async () => {
      const added = await this.api.add(name);
      this.newName = '';
      this.notice.set(`Added passkey ${added.name}.`);
    });
  }

  protected saveName(passkey: Passkey): Promise<void> {
    const name = this.draftName.trim();
    return this.change(async () => {
      await this.api.rename(passkey.id, name);
      this.editing.set(null);
      this.notice.set(`Renamed to ${name}.`);
    });
  }

  protected remove(passkey: Passkey): Promise<void> {
    return this.change(async () => {
      await this.api.remove(passkey.id);
      this.notice.set(`Removed passkey ${passkey.name}.`);
    });
  }

  protected confirmWithPassword(): Promise<void> {
    return this.confirmThen(() => this.api.confirmWithPassword(this.confirmPassword, this.confirmCode.trim() || undefined));
  }

  protected confirmWithPasskey(): Promise<void> {
    return this.confirmThen(() => this.passkeySignIn.signIn(this.session.caller()?.email ?? undefined));
  }

  protected cancelConfirm(): void {
    this.confirming.set(null);
    this.confirmPassword = '';
    this.confirmCode = '';
  }

  private async confirmThen(confirm: () => Promise<void>): Promise<void> {
    const pending = this.confirming();
    await this.attempt(async () => {
      await confirm();
      this.cancelConfirm();
      if (pending) await pending();
    });
  }

  /** Runs a change; one that needs a fresh confirmation waits for it and runs again after. */
  private async change(work: () => Promise<void>): Promise<void> {
    this.notice.set(null);
    await this.attempt(work, () => this.confirming.set(work));
  }

  private async attempt(work: () => Promise<void>, onReauthenticationRequired?: () => void): Promise<void> {
    this.busy.set(true);
    this.problem.set(null);
    try {
      await work();
      await this.reload();
    } catch (error) {
      const problem = ceremonyProblem(error) ?? problemOf(error);
      if (problem.code === 'reauthentication_required' && onReauthenticationRequired) onReauthenticationRequired();
      else this.problem.set(problem);
    } finally {
      this.busy.set(false);
    }
  }

  private async reload(): Promise<void> {
    try {
      this.passkeys.set(await this.api.list());
    } catch (error) {
      this.problem.set(problemOf(error));
    } finally {
      this.loading.set(false);
    }
  }
}
