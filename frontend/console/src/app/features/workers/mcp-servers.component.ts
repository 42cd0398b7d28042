import { ChangeDetectionStrategy, Component, computed, effect, inject, input, linkedSignal, untracked } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { ApiClient } from '../../core/api';
import { Session } from '../../core/session';
import { BadgeComponent } from '../../shared/badge.component';
import { loadable } from '../../shared/loadable';
import { StateViewComponent } from '../../shared/state-view.component';
import { mcpServersOf, trustNote } from './mcp-servers';
import type { Version } from './workers.api';

/** A version's MCP servers (the latest unless another is chosen) and the tools it pinned from each, with whether a grant covers them. */
@Component({
  selector: 'pa-mcp-servers',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, StateViewComponent, BadgeComponent],
  styles: `
    article { border-top: 1px solid var(--border); margin-top: 1rem; }
    caption { text-align: left; font-weight: 600; padding: 0.5rem 0; }
    .badges { display: flex; flex-wrap: wrap; gap: 0.25rem; }
    th .hint { display: block; font-weight: 400; }
    select { max-width: 10rem; }
  `,
  template: `
    <section aria-labelledby="mcp-heading">
      <h2 id="mcp-heading">MCP servers</h2>
      @if (versions().length === 0) {
        <p class="state">No versions yet: a version's servers and their pinned tools show here once it is saved.</p>
      } @else {
        @if (versions().length > 1) {
          <label for="mcp-version">Version shown</label>
          <select id="mcp-version" [ngModel]="shown()" (ngModelChange)="shown.set(+$event)">
            @for (n of versions(); track n) { <option [value]="n">{{ n }}</option> }
          </select>
        }
        <pa-state [of]="version" what="the version" [empty]="servers().length === 0" [emptyText]="'Version ' + shown() + ' declares no MCP servers.'">
          @if (version.value(); as v) {
            <p class="hint" data-testid="mcp-pinned-note">
              The tool lists are pinned to version {{ v.version }}: a tool a server adds later is not callable until a new version is created,
              and a tool whose schema has changed since is refused. A tool marked destructive waits for a person's approval on every call, whatever its grant says.
            </p>
            @for (server of servers(); track server.name) {
              <article [attr.aria-labelledby]="'mcp-server-' + server.name">
                <h3 [id]="'mcp-server-' + server.name">Server <code>{{ server.name }}</code></h3>
                <dl class="facts">
                  <dt>Transport</dt><dd>{{ server.transport }}</dd>
                  <dt>{{ server.transport === 'http' ? 'URL' : 'Command' }}</dt><dd><code>{{ server.target }}</code></dd>
                  @if (server.credential) { <dt>Credential</dt><dd><code>{{ server.credential }}</code> (sent as a bearer token)</dd> }
                  <dt>Trust</dt><dd><pa-badge [text]="server.trusted ? 'trusted' : 'untrusted'" [kind]="server.trusted ? 'ok' : 'warn'" /> {{ note(server) }}</dd>
                </dl>
                @if (server.tools.length) {
                  <div class="table-wrap" tabindex="0">
                    <table>
                      <caption>Tools of {{ server.name }} pinned by version {{ v.version }}</caption>
                      <thead>
                        <tr><th scope="col">Tool</th><th scope="col">Description</th><th scope="col">Annotations</th><th scope="col">Granted</th><th scope="col">Digest</th></tr>
                      </thead>
                      <tbody>
                        @for (tool of server.tools; track tool.name) {
                          <tr>
                            <th scope="row"><code>{{ tool.name }}</code>@if (tool.title) { <span class="hint">{{ tool.title }}</span> }</th>
                            <td>{{ tool.description || '—' }}</td>
                            <td>
                              <span class="badges">
                                @for (badge of tool.badges; track badge.text) { <pa-badge [text]="badge.text" [kind]="badge.tone" /> } @empty { <span class="hint">none</span> }
                              </span>
                            </td>
                            <td>
                              @if (tool.grant) { <pa-badge text="granted" kind="ok" /> by <code>{{ tool.grant }}</code> } @else { <pa-badge text="not granted" kind="neutral" /> calls are denied }
                            </td>
                            <td><code [attr.title]="tool.digest">{{ tool.digestPrefix }}</code></td>
                          </tr>
                        }
                      </tbody>
                    </table>
                  </div>
                } @else {
                  <p class="hint">No tools: the server listed none when this version was created.</p>
                }
              </article>
            }
          }
        </pa-state>
      }
    </section>
  `,
})
export class McpServersComponent {
  private readonly api = inject(ApiClient);
  private readonly session = inject(Session);
  readonly workerId = input.required<string>();
  /** The worker's version numbers. */
  readonly versions = input.required<readonly number[]>();
  /** Follows the latest version whenever the list changes (a version was just saved). */
  protected readonly shown = linkedSignal(() => Math.max(0, ...this.versions()));
  protected readonly version = loadable(
    () => this.api.get<Version>(`/api/v1/workspaces/${this.session.workspaceId()}/workers/${this.workerId()}/versions/${this.shown()}`),
    false,
  );
  protected readonly servers = computed(() => mcpServersOf(this.version.value()?.definition));
  protected readonly note = trustNote;

  constructor() {
    effect(() => {
      // Read here so that another worker or version shown loads again.
      const [workerId, shown] = [this.workerId(), this.shown()];
      if (workerId && shown > 0) untracked(() => void this.version.reload());
    });
  }
}
