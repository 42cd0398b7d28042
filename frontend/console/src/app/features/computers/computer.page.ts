import { afterNextRender, ChangeDetectionStrategy, Component, DestroyRef, type ElementRef, inject, Injector, input, signal, viewChild, type OnInit } from '@angular/core';
import { Router, RouterLink } from '@angular/router';
import { ApiClient, problemOf } from '../../core/api';
import { Session } from '../../core/session';
import { BadgeComponent } from '../../shared/badge.component';
import { formatTime } from '../../shared/format';
import { Loadable } from '../../shared/loadable';
import type { Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { StateViewComponent } from '../../shared/state-view.component';
import { hostKeyWarning, statusShown, targetOf } from './computer-status';
import { computerPath, type ComputerPolicy, type ComputerView } from './computers.api';

const POLICY_ROWS: ReadonlyArray<{ key: keyof ComputerPolicy; label: string; meaning: string }> = [
  { key: 'network', label: 'Network', meaning: 'commands reaching the network' },
  { key: 'write', label: 'Writing files', meaning: 'commands writing files' },
  { key: 'shell', label: 'Running commands', meaning: 'running a command at all' },
  { key: 'secrets', label: 'Secrets', meaning: 'secrets handed to commands by name' },
  { key: 'approval', label: 'Approval', meaning: 'how what asks is approved' },
];

/** One computer: its state and host keys, target, roots, policy and capabilities; probe it now, or remove it after confirming. */
@Component({
  selector: 'pa-computer',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [RouterLink, StateViewComponent, ProblemViewComponent, BadgeComponent],
  styles: `
    ul.plain { margin: 0.25rem 0; padding-left: 1.25rem; }
    .confirm { border: 2px solid var(--bad); border-radius: var(--radius); padding: 0.5rem 1rem; margin: 0.75rem 0; }
  `,
  template: `
    <p><a [routerLink]="['/w', ws(), 'computers']">← Computers</a></p>
    <h1>Computer <code>{{ name() }}</code></h1>
    <pa-state [of]="record" what="the computer">
      @if (record.value(); as c) {
        @if (warning(c); as text) {
          <div class="state error" role="alert" data-testid="host-key-warning"><p><strong>{{ text }}</strong></p></div>
        }
        @let shown = status(c);
        <p data-testid="computer-state"><pa-badge [text]="shown.state" [kind]="shown.tone" /> {{ shown.text }}</p>
        <dl class="facts">
          <dt>Kind</dt><dd>{{ c.kind === 'ssh' ? 'over SSH' : 'the sandbox on the server' }}</dd>
          @if (c.description) { <dt>Description</dt><dd>{{ c.description }}</dd> }
          <dt>Target</dt><dd><code>{{ target(c) }}</code></dd>
          @if (c.ssh; as ssh) { <dt>Key credential</dt><dd><code>{{ ssh.keyCredential }}</code></dd> }
          <dt>Last probe</dt><dd>{{ c.status.detail || '—' }}</dd>
          <dt>Stale after</dt><dd>{{ c.status.staleAfterMs / 1000 }} s without a successful probe</dd>
          <dt>Version</dt><dd>{{ c.version }}</dd>
          <dt>Registered</dt><dd>{{ time(c.createdAt) }} by {{ c.createdBy.kind }} {{ c.createdBy.id }}</dd>
          <dt>Updated</dt><dd>{{ time(c.updatedAt) }}</dd>
        </dl>

        @if (c.ssh; as ssh) {
          <h2>Pinned host keys</h2>
          @if (ssh.hostKeys.length) {
            <ul class="plain">@for (key of ssh.hostKeys; track key) { <li><code>{{ key }}</code></li> }</ul>
          } @else { <p class="hint">None: connections are refused until a key is pinned.</p> }
        }

        <h2>Roots</h2>
        @if (c.roots.length) {
          <ul class="plain">@for (root of c.roots; track root) { <li><code>{{ root }}</code></li> }</ul>
        } @else { <p class="hint">Commands work in the run's workspace.</p> }

        <h2>Policy</h2>
        <div class="table-wrap" tabindex="0">
          <table aria-label="Policy of this computer">
            <thead><tr><th scope="col">Axis</th><th scope="col">Setting</th><th scope="col">Governs</th></tr></thead>
            <tbody>
              @for (row of policyRows; track row.key) {
                <tr><td>{{ row.label }}</td><td><code>{{ c.policy[row.key] }}</code></td><td>{{ row.meaning }}</td></tr>
              }
            </tbody>
          </table>
        </div>

        <h2>Capabilities</h2>
        @if (c.capabilities; as caps) {
          <dl class="facts">
            <dt>System</dt><dd>{{ caps.os }} {{ caps.arch }}</dd>
            <dt>CPUs</dt><dd>{{ caps.cpus }}</dd>
            <dt>Tools found</dt><dd>{{ caps.tools.length ? caps.tools.join(', ') : 'none of those looked for' }}</dd>
          </dl>
        } @else { <p class="hint">Not known until a probe succeeds.</p> }

        @if (session.can('computer-manage')) {
          <div class="actions">
            <button type="button" (click)="probe()" [disabled]="busy()">Probe now</button>
            @if (!confirmingRemove()) {
              <button type="button" class="danger" (click)="askRemove()" [disabled]="busy()">Remove…</button>
            }
            @if (busy()) { <span class="hint" role="status">Working…</span> }
          </div>
          @if (confirmingRemove()) {
            <section class="confirm" aria-labelledby="remove-heading" data-testid="confirm-remove">
              <h2 id="remove-heading" tabindex="-1" #removeHeading>Remove {{ c.name }}?</h2>
              <p>Commands can no longer run on it. Registering it again means pinning its host key again.</p>
              <div class="actions">
                <button type="button" class="danger" (click)="remove()" [disabled]="busy()">Remove {{ c.name }}</button>
                <button type="button" class="secondary" (click)="confirmingRemove.set(false)" [disabled]="busy()">Keep it</button>
              </div>
            </section>
          }
        }
        @if (note(); as text) { <p role="status">{{ text }}</p> }
        <pa-problem [problem]="problem()" />
      }
    </pa-state>
  `,
})
export class ComputerPage implements OnInit {
  private readonly api = inject(ApiClient);
  private readonly router = inject(Router);
  private readonly injector = inject(Injector);
  private readonly destroyRef = inject(DestroyRef);
  protected readonly session = inject(Session);
  readonly name = input.required<string>();
  protected readonly ws = this.session.workspaceId;
  private readonly answeredAt = signal(Date.now());
  protected readonly now = signal(Date.now());
  protected readonly record = new Loadable(async () => {
    const computer = await this.api.get<ComputerView>(computerPath(this.ws(), this.name()));
    this.answeredAt.set(Date.now());
    return computer;
  });
  protected readonly policyRows = POLICY_ROWS;
  protected readonly time = formatTime;
  protected readonly target = targetOf;
  protected readonly warning = (computer: ComputerView) => hostKeyWarning(computer.status);
  protected readonly busy = signal(false);
  protected readonly confirmingRemove = signal(false);
  protected readonly note = signal<string | null>(null);
  protected readonly problem = signal<Problem | null>(null);
  private readonly removeHeading = viewChild<ElementRef<HTMLElement>>('removeHeading');

  ngOnInit(): void {
    void this.record.reload();
    const timer = setInterval(() => this.now.set(Date.now()), 1_000);
    this.destroyRef.onDestroy(() => clearInterval(timer));
  }

  protected status(computer: ComputerView) {
    return statusShown(computer.status, this.now() - this.answeredAt(), this.now());
  }

  protected askRemove(): void {
    this.confirmingRemove.set(true);
    afterNextRender(() => this.removeHeading()?.nativeElement.focus(), { injector: this.injector });
  }

  protected probe(): Promise<void> {
    return this.act(async () => {
      const computer = await this.api.post<ComputerView>(`${computerPath(this.ws(), this.name())}/probe`);
      this.answeredAt.set(Date.now());
      this.record.value.set(computer);
      this.note.set(`Probed: ${statusShown(computer.status, 0, Date.now()).text}.`);
    });
  }

  protected remove(): Promise<void> {
    return this.act(async () => {
      await this.api.delete(computerPath(this.ws(), this.name()));
      await this.router.navigate(['/w', this.ws(), 'computers']);
    });
  }

  private async act(work: () => Promise<void>): Promise<void> {
    this.busy.set(true);
    this.problem.set(null);
    this.note.set(null);
    try {
      await work();
    } catch (error) {
      this.problem.set(problemOf(error));
      // A refused probe (a changed host key) is recorded: show the record as it now stands.
      void this.record.reload(true);
    } finally {
      this.busy.set(false);
      this.confirmingRemove.set(false);
    }
  }
}
