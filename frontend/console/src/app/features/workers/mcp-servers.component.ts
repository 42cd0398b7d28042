import { ChangeDetectionStrategy, Component, computed, effect, inject, input, linkedSignal, signal, untracked } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { Router } from '@angular/router';
import { ApiClient, problemOf } from '../../core/api';
import { Session } from '../../core/session';
import { BadgeComponent } from '../../shared/badge.component';
import { loadable } from '../../shared/loadable';
import type { Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { StateViewComponent } from '../../shared/state-view.component';
import { authorizationTarget, connectedCredential, connectionStatus, connectRequest, returnToFor, type BeginConnectionAnswer, type ConnectionStatus, type OAuthConnection } from './mcp-connections';
import { mcpServersOf, trustNote, type McpServerView } from './mcp-servers';
import type { Version } from './workers.api';

/**
 * A version's MCP servers (the latest unless another is chosen) and the tools it pinned from each,
 * with whether a grant covers them; for a server that authorizes with OAuth, how its connection
 * stands and, for an admin, the button that connects it (the browser goes to the authorization
 * server, which sends it back here with `?mcp_connected=<credential>`).
 */
@Component({
  selector: 'pa-mcp-servers',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, StateViewComponent, BadgeComponent, ProblemViewComponent],
  styles: `
    article { border-top: 1px solid var(--border); margin-top: 1rem; }
    caption { text-align: left; font-weight: 600; padding: 0.5rem 0; }
    .badges { display: flex; flex-wrap: wrap; gap: 0.25rem; }
    th .hint { display: block; font-weight: 400; }
    select { max-width: 10rem; }
    .oauth button { margin-left: 0.5rem; }
  `,
  template: `
    <section aria-labelledby="mcp-heading">
      <h2 id="mcp-heading">MCP servers</h2>
      @if (connected(); as credential) {
        <p role="status" data-testid="mcp-connected">Connected: the credential <code>{{ credential }}</code> now holds the OAuth connection; the vault keeps its tokens and refreshes them.</p>
      }
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
                  @if (server.oauth; as oauth) {
                    <dt>OAuth</dt>
                    <dd class="oauth" [attr.data-testid]="'mcp-oauth-' + server.name">
                      @if (connections.status() === 'error') {
                        <span class="hint">The connection state could not be read: {{ connections.problem()?.title }}</span>
                      } @else if (status(server); as s) {
                        <pa-badge [text]="s.badge" [kind]="s.tone" /> {{ s.text }}
                      } @else {
                        <span class="hint">Reading the connection…</span>
                      }
                      <span class="hint">
                        Credential <code>{{ oauth.credential }}</code>@if (oauth.scopes.length) {, scopes <code>{{ oauth.scopes.join(' ') }}</code>}@if (oauth.clientId) {, client <code>{{ oauth.clientId }}</code>}.
                      </span>
                      @if (session.can('admin')) {
                        <button type="button" class="secondary" (click)="connect(server)" [disabled]="connecting() !== null" [attr.aria-label]="(status(server)?.action ?? 'Connect') + ' ' + server.name">
                          {{ status(server)?.action ?? 'Connect' }}
                        </button>
                      }
                    </dd>
                  }
                  <dt>Trust</dt><dd><pa-badge [text]="server.trusted ? 'trusted' : 'untrusted'" [kind]="server.trusted ? 'ok' : 'warn'" /> {{ note(server) }}</dd>
                </dl>
                @if (connectFailure()?.server === server.name) { <pa-problem [problem]="connectFailure()!.problem" /> }
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
  private readonly router = inject(Router);
  protected readonly session = inject(Session);
  readonly workerId = input.required<string>();
  /** The worker's version numbers. */
  readonly versions = input.required<readonly number[]>();
  /** `?mcp_connected=` of the page: the credential the authorization server just sent the operator back for. */
  readonly connectedParam = input<string | null | undefined>(null, { alias: 'connected' });
  protected readonly connected = computed(() => connectedCredential(this.connectedParam()));
  /** Follows the latest version whenever the list changes (a version was just saved). */
  protected readonly shown = linkedSignal(() => Math.max(0, ...this.versions()));
  protected readonly version = loadable(
    () => this.api.get<Version>(`/api/v1/workspaces/${this.session.workspaceId()}/workers/${this.workerId()}/versions/${this.shown()}`),
    false,
  );
  protected readonly servers = computed(() => mcpServersOf(this.version.value()?.definition));
  protected readonly note = trustNote;
  protected readonly connections = loadable(() => this.api.get<{ items: OAuthConnection[] }>(`/api/v1/workspaces/${this.session.workspaceId()}/mcp/connections`), false);
  /** The server whose Connect was pressed, until the browser leaves for the authorization server. */
  protected readonly connecting = signal<string | null>(null);
  protected readonly connectFailure = signal<{ server: string; problem: Problem } | null>(null);

  constructor() {
    effect(() => {
      // Read here so that another worker or version shown loads again.
      const [workerId, shown] = [this.workerId(), this.shown()];
      if (workerId && shown > 0) untracked(() => void this.version.reload());
    });
    effect(() => {
      // Only a version with a server that authorizes with OAuth has connections to show.
      if (this.servers().some((server) => server.oauth)) untracked(() => void this.connections.reload(true));
    });
  }

  protected status(server: McpServerView): ConnectionStatus | null {
    const items = this.connections.value()?.items;
    return items ? connectionStatus(server, items) : null;
  }

  /** Begins the connection, then sends the browser to the authorization server to consent. */
  protected async connect(server: McpServerView): Promise<void> {
    const workspaceId = this.session.workspaceId();
    if (!workspaceId || this.connecting()) return;
    this.connecting.set(server.name);
    this.connectFailure.set(null);
    try {
      const request = connectRequest(workspaceId, server, returnToFor(this.router.url));
      const answer = await this.api.post<BeginConnectionAnswer>(request.path, request.body);
      window.location.assign(authorizationTarget(answer));
    } catch (error) {
      this.connectFailure.set({ server: server.name, problem: problemOf(error) });
      this.connecting.set(null);
    }
  }
}
