import { afterNextRender, ChangeDetectionStrategy, Component, computed, type ElementRef, inject, Injector, input, output, signal, viewChild } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { ApiClient, problemOf } from '../../core/api';
import { issuesByPath, type Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { confirmationHolds, emptyComputerForm, registrationBody, verifyCommands, type PendingHostKey } from './computer-form';
import { presentedHostKeyOf } from './computer-status';
import { ACCESS_LEVELS, APPROVAL_MODES, computerPath, type ComputerView } from './computers.api';

const PLACED = ['name', 'description', 'ssh.host', 'ssh.port', 'ssh.user', 'ssh.keyCredential', 'ssh.hostKeys', 'roots'];

/**
 * Registers a computer. An ssh host whose key is not pinned is refused with the key it presented:
 * the form shows that key and how to check it, and sends it back as `acceptHostKey` only after the
 * operator says, for that host and port, that they checked it.
 */
@Component({
  selector: 'pa-computer-register',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, ProblemViewComponent],
  styles: `
    fieldset { border: 1px solid var(--border); border-radius: var(--radius); margin: 0.75rem 0; padding: 0.5rem 0.75rem; }
    legend { font-weight: 600; padding: 0 0.25rem; }
    label.inline { display: inline-flex; gap: 0.4rem; align-items: center; font-weight: 400; margin: 0.25rem 1rem 0.25rem 0; }
    label.inline input { width: auto; }
    .policy { display: grid; grid-template-columns: repeat(auto-fill, minmax(11rem, 1fr)); gap: 0 1rem; }
    .confirm { border: 2px solid var(--warn); border-radius: var(--radius); background: #fff8c5; padding: 0.75rem 1rem; margin: 1rem 0; }
    .confirm h3 { margin-top: 0; }
    .fingerprint { font-size: 1rem; word-break: break-all; }
  `,
  template: `
    <form (ngSubmit)="submit()" aria-label="Register a computer">
      <label for="computer-name">Name</label>
      <input id="computer-name" name="name" required [(ngModel)]="form.name" autocomplete="off" spellcheck="false" aria-describedby="computer-name-hint" />
      <p class="hint" id="computer-name-hint">Lower-case letters, digits and -, starting with a letter. Registering an existing name replaces its whole spec, pinned host keys included.</p>
      @for (message of issues('name'); track $index) { <p class="field-error">{{ message }}</p> }

      <fieldset>
        <legend>Kind</legend>
        <label class="inline"><input type="radio" name="kind" value="ssh" [(ngModel)]="form.kind" /> Over SSH</label>
        <label class="inline"><input type="radio" name="kind" value="local" [(ngModel)]="form.kind" /> The sandbox on the server</label>
      </fieldset>

      @if (form.kind === 'ssh') {
        <label for="computer-host">Host</label>
        <input id="computer-host" name="host" required [(ngModel)]="form.host" autocomplete="off" spellcheck="false" placeholder="build-1.example.com" />
        @for (message of issues('ssh.host'); track $index) { <p class="field-error">{{ message }}</p> }
        <label for="computer-port">Port</label>
        <input id="computer-port" name="port" type="number" min="1" max="65535" [(ngModel)]="form.port" placeholder="22" />
        @for (message of issues('ssh.port'); track $index) { <p class="field-error">{{ message }}</p> }
        <label for="computer-user">User</label>
        <input id="computer-user" name="user" required [(ngModel)]="form.user" autocomplete="off" spellcheck="false" />
        @for (message of issues('ssh.user'); track $index) { <p class="field-error">{{ message }}</p> }
        <label for="computer-key">Key credential</label>
        <input id="computer-key" name="keyCredential" required [(ngModel)]="form.keyCredential" autocomplete="off" spellcheck="false" aria-describedby="computer-key-hint" />
        <p class="hint" id="computer-key-hint">The workspace credential holding the private key (OpenSSH or PEM).</p>
        @for (message of issues('ssh.keyCredential'); track $index) { <p class="field-error">{{ message }}</p> }
        <label for="computer-roots">Roots (absolute directories commands may work in, one a line)</label>
        <textarea id="computer-roots" name="roots" class="code short" required [(ngModel)]="form.roots" spellcheck="false" placeholder="/srv/app"></textarea>
        @for (message of rootIssues(); track $index) { <p class="field-error">{{ message }}</p> }
        <label for="computer-host-keys">Pinned host keys (optional, SHA256:… one a line)</label>
        <textarea id="computer-host-keys" name="hostKeys" class="code short" [(ngModel)]="form.hostKeys" spellcheck="false" aria-describedby="computer-host-keys-hint"></textarea>
        <p class="hint" id="computer-host-keys-hint">Leave empty to be shown the key the host presents and confirm it.</p>
        @for (message of issues('ssh.hostKeys'); track $index) { <p class="field-error">{{ message }}</p> }
      }

      <label for="computer-description">Description (optional)</label>
      <input id="computer-description" name="description" [(ngModel)]="form.description" maxlength="500" />
      @for (message of issues('description'); track $index) { <p class="field-error">{{ message }}</p> }

      <fieldset>
        <legend>Policy</legend>
        <p class="hint">What commands on this computer may do without asking. The defaults are the conservative ones.</p>
        <div class="policy">
          @for (axis of levelAxes; track axis.key) {
            <div>
              <label [for]="'policy-' + axis.key">{{ axis.label }}</label>
              <select [id]="'policy-' + axis.key" [name]="axis.key" [(ngModel)]="form.policy[axis.key]">
                @for (level of levels; track level) { <option [value]="level">{{ level }}</option> }
              </select>
            </div>
          }
          <div>
            <label for="policy-secrets">Secrets</label>
            <select id="policy-secrets" name="secrets" [(ngModel)]="form.policy.secrets">
              <option value="deny">deny</option>
              <option value="allow">allow</option>
            </select>
          </div>
          <div>
            <label for="policy-approval">Approval</label>
            <select id="policy-approval" name="approval" [(ngModel)]="form.policy.approval">
              @for (mode of approvalModes; track mode) { <option [value]="mode">{{ mode }}</option> }
            </select>
          </div>
        </div>
      </fieldset>

      <div class="actions"><button type="submit" [disabled]="busy() || !form.name.trim()">Register</button></div>
    </form>

    @if (holds()) {
      @let key = pending()!;
      <section class="confirm" aria-labelledby="confirm-key-heading" data-testid="confirm-host-key">
        <h3 id="confirm-key-heading" tabindex="-1" #confirmHeading>Confirm the host key of {{ key.host }}</h3>
        <p>{{ key.host }} presented this key. Nothing was registered: confirm that it is the host's own key before it is pinned.</p>
        <p><code class="fingerprint" data-testid="presented-host-key">{{ key.presented }}</code></p>
        <p>Compare it with what the host itself prints, <code>{{ verify().onHost }}</code>, or, trusting the network in between, <code>{{ verify().fromHere }}</code>.</p>
        <label class="inline" for="confirm-key-verified">
          <input id="confirm-key-verified" type="checkbox" [checked]="verified()" (change)="onVerified($event)" />
          I have verified that {{ key.presented }} is the host key of {{ key.host }}
        </label>
        <div class="actions">
          <button type="button" (click)="acceptAndRegister()" [disabled]="busy() || !verified()">Pin this key and register</button>
          <button type="button" class="secondary" (click)="discard()" [disabled]="busy()">Cancel</button>
        </div>
      </section>
    }
    <pa-problem [problem]="problem()" [placed]="placed()" />
    @if (done(); as text) { <p role="status">{{ text }}</p> }
  `,
})
export class ComputerRegisterComponent {
  private readonly api = inject(ApiClient);
  private readonly injector = inject(Injector);
  readonly workspaceId = input.required<string | null>();
  readonly registered = output<ComputerView>();

  protected form = emptyComputerForm();
  protected readonly levels = ACCESS_LEVELS;
  protected readonly approvalModes = APPROVAL_MODES;
  protected readonly levelAxes = [
    { key: 'network', label: 'Network' },
    { key: 'write', label: 'Writing files' },
    { key: 'shell', label: 'Running commands' },
  ] as const;
  protected readonly placed = computed(() => [...PLACED, ...(this.problem()?.errors ?? []).map((issue) => issue.path).filter((path) => path.startsWith('roots.'))]);
  protected readonly busy = signal(false);
  protected readonly problem = signal<Problem | null>(null);
  protected readonly done = signal<string | null>(null);
  protected readonly pending = signal<PendingHostKey | null>(null);
  protected readonly verified = signal(false);
  private readonly confirmHeading = viewChild<ElementRef<HTMLElement>>('confirmHeading');

  protected issues(path: string): string[] {
    return issuesByPath(this.problem()?.errors ?? []).get(path) ?? [];
  }

  protected rootIssues(): string[] {
    return [...issuesByPath(this.problem()?.errors ?? []).entries()].filter(([path]) => path === 'roots' || path.startsWith('roots.')).flatMap(([path, messages]) => messages.map((m) => (path === 'roots' ? m : `line ${Number(path.slice(6)) + 1}: ${m}`)));
  }

  /** Shown only while the form still names the computer, host and port the key came from. */
  protected holds(): boolean {
    return confirmationHolds(this.pending(), this.form);
  }

  protected verify() {
    const key = this.pending();
    return verifyCommands(key?.host ?? '', key?.port ?? 22);
  }

  protected submit(): Promise<void> {
    return this.send(null);
  }

  protected acceptAndRegister(): Promise<void> {
    const key = this.pending();
    // The key is sent only for the host it was shown for, and only once the operator said they checked it.
    if (!this.verified() || !confirmationHolds(key, this.form)) return Promise.resolve();
    return this.send(key.presented);
  }

  protected onVerified(event: Event): void {
    this.verified.set((event.target as HTMLInputElement).checked);
  }

  protected discard(): void {
    this.pending.set(null);
    this.verified.set(false);
  }

  private async send(acceptHostKey: string | null): Promise<void> {
    const name = this.form.name.trim();
    this.busy.set(true);
    this.problem.set(null);
    this.done.set(null);
    try {
      const computer = await this.api.put<ComputerView>(computerPath(this.workspaceId(), name), registrationBody(this.form, acceptHostKey));
      this.discard();
      this.form = emptyComputerForm();
      this.done.set(`Registered ${computer.name}${computer.ssh ? ` with host key ${computer.ssh.hostKeys.join(', ')} pinned` : ''}.`);
      this.registered.emit(computer);
    } catch (error) {
      const problem = problemOf(error);
      const presented = problem.code === 'host_key_unpinned' ? presentedHostKeyOf(problem) : null;
      if (presented) {
        this.pending.set({ name, host: this.form.host.trim(), port: this.form.port || 22, presented });
        this.verified.set(false);
        afterNextRender(() => this.confirmHeading()?.nativeElement.focus(), { injector: this.injector });
      } else {
        this.discard();
        this.problem.set(problem);
      }
    } finally {
      this.busy.set(false);
    }
  }
}
