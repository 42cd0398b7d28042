import { ChangeDetectionStrategy, Component, DestroyRef, inject, signal, type OnInit } from '@angular/core';
import { RouterLink } from '@angular/router';
import { ApiClient } from '../../core/api';
import { Session } from '../../core/session';
import { BadgeComponent } from '../../shared/badge.component';
import { loadable } from '../../shared/loadable';
import { StateViewComponent } from '../../shared/state-view.component';
import { ComputerRegisterComponent } from './computer-register.component';
import { hostKeyWarning, statusShown, targetOf } from './computer-status';
import { computersBase, type ComputerView } from './computers.api';

/** The workspace's computers with their state as it can still be backed, host key warnings first, and registering one. */
@Component({
  selector: 'pa-computers',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [RouterLink, StateViewComponent, BadgeComponent, ComputerRegisterComponent],
  styles: `
    .key-warning { color: var(--bad); font-weight: 600; }
    td.target { word-break: break-all; }
  `,
  template: `
    <h1>Computers</h1>
    <p class="hint">Machines a worker's run_command runs on: over SSH with pinned host keys, or the sandbox on the server. A state is only as fresh as the last probe that backs it.</p>

    @if (changedKeys().length) {
      <div class="state error" role="alert" data-testid="host-key-alerts">
        @for (c of changedKeys(); track c.name) { <p><a [routerLink]="[c.name]">{{ c.name }}</a>: {{ warning(c) }}</p> }
      </div>
    }

    <div class="actions"><button type="button" class="secondary" (click)="list.reload(true)">Refresh</button></div>
    <pa-state [of]="list" what="computers" [route]="'GET ' + base()" [empty]="(list.value()?.items?.length ?? 0) === 0" emptyText="No computers are registered in this workspace.">
      @if (list.value(); as page) {
        <div class="table-wrap" tabindex="0">
          <table aria-label="Computers">
            <thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Host</th><th scope="col">State</th><th scope="col">Host key</th></tr></thead>
            <tbody>
              @for (c of page.items; track c.name) {
                <tr [attr.data-testid]="'computer-' + c.name">
                  <td><a [routerLink]="[c.name]"><code>{{ c.name }}</code></a></td>
                  <td>{{ c.kind }}</td>
                  <td class="target">{{ target(c) }}</td>
                  <td>
                    @let shown = status(c);
                    <pa-badge [text]="shown.state" [kind]="shown.tone" /> <span>{{ shown.text }}</span>
                  </td>
                  <td>
                    @switch (c.status.hostKey.state) {
                      @case ('changed') { <span class="key-warning"><pa-badge text="changed" kind="bad" /> presented {{ c.status.hostKey.presented ?? 'a key' }}, not pinned</span> }
                      @case ('pinned') { {{ c.ssh?.hostKeys?.length ?? 0 }} pinned }
                      @default { <span class="hint">not applicable</span> }
                    }
                  </td>
                </tr>
              }
            </tbody>
          </table>
        </div>
      }
    </pa-state>

    @if (session.can('computer-manage')) {
      <section class="panel" aria-labelledby="register-heading">
        <h2 id="register-heading">Register a computer</h2>
        <pa-computer-register [workspaceId]="ws()" (registered)="list.reload(true)" />
      </section>
    } @else {
      <p class="hint">Registering, probing and removing computers takes the computer-manage permission (admin or owner).</p>
    }
  `,
})
export class ComputersPage implements OnInit {
  private readonly api = inject(ApiClient);
  private readonly destroyRef = inject(DestroyRef);
  protected readonly session = inject(Session);
  protected readonly ws = this.session.workspaceId;
  protected readonly base = () => computersBase(this.ws());
  private readonly answeredAt = signal(Date.now());
  protected readonly now = signal(Date.now());
  protected readonly list = loadable(async () => {
    const page = await this.api.get<{ items: ComputerView[] }>(this.base());
    this.answeredAt.set(Date.now());
    return page;
  });
  protected readonly target = targetOf;
  protected readonly warning = (computer: ComputerView) => hostKeyWarning(computer.status);
  protected readonly changedKeys = () => (this.list.value()?.items ?? []).filter((computer) => computer.status.hostKey.state === 'changed');

  ngOnInit(): void {
    // Ages tick every second from the answer; the list itself is asked again every fifteenth tick.
    let ticks = 0;
    const timer = setInterval(() => {
      this.now.set(Date.now());
      if (++ticks % 15 === 0) void this.list.reload(true);
    }, 1_000);
    this.destroyRef.onDestroy(() => clearInterval(timer));
  }

  protected status(computer: ComputerView) {
    return statusShown(computer.status, this.now() - this.answeredAt(), this.now());
  }
}
