import { ChangeDetectionStrategy, Component, computed, effect, inject } from '@angular/core';
import { Router, RouterLink, RouterLinkActive, RouterOutlet } from '@angular/router';
import { ApiClient } from './core/api';
import { Session } from './core/session';

/** The frame: header with the workspace switcher, navigation, and the page. */
@Component({
  selector: 'pa-root',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [RouterOutlet, RouterLink, RouterLinkActive],
  styles: `
    .skip { position: absolute; left: -999px; top: 0; background: #fff; padding: 0.5rem; z-index: 10; }
    .skip:focus { left: 0.5rem; }
    header { display: flex; flex-wrap: wrap; align-items: center; gap: 0.75rem 1.25rem; padding: 0.6rem 1.25rem; background: #0d1b2a; color: #fff; }
    header a.brand { color: #fff; font-weight: 700; text-decoration: none; }
    header label { display: inline; margin: 0 0.4rem 0 0; font-weight: 400; }
    header select { width: auto; padding: 0.25rem 0.4rem; color: var(--fg); }
    .who { margin-left: auto; display: flex; gap: 0.75rem; align-items: center; flex-wrap: wrap; }
    .who button { background: transparent; border-color: #fff; color: #fff; padding: 0.25rem 0.7rem; }
    .who a { color: #fff; }
    nav ul { display: flex; flex-wrap: wrap; gap: 0.25rem; list-style: none; margin: 0; padding: 0.4rem 1rem; border-bottom: 1px solid var(--border); background: var(--panel); }
    nav a { display: inline-block; padding: 0.35rem 0.7rem; border-radius: var(--radius); text-decoration: none; color: var(--fg); }
    nav a.active { background: #fff; border: 1px solid var(--border); font-weight: 600; }
    main { padding: 1.25rem; max-width: 80rem; margin: 0 auto; }
    @media (max-width: 640px) {
      header { padding: 0.5rem 0.75rem; gap: 0.4rem 0.75rem; }
      nav ul { flex-wrap: nowrap; overflow-x: auto; padding: 0.3rem 0.5rem; scrollbar-width: thin; }
      nav a { white-space: nowrap; padding: 0.3rem 0.55rem; }
      main { padding: 0.9rem 0.75rem; }
    }
  `,
  template: `
    <a class="skip" href="#main" (click)="skipToMain($event)">Skip to content</a>
    <header>
      <a class="brand" routerLink="/">PacketAgent</a>
      @if (session.caller(); as caller) {
        @if (caller.workspaces.length > 0 && session.workspaceId()) {
          <span>
            <label for="workspace-switch">Workspace</label>
            <select id="workspace-switch" (change)="switchWorkspace($event)">
              @for (w of caller.workspaces; track w.id) {
                <option [value]="w.id" [selected]="w.id === session.workspaceId()">{{ w.name }} ({{ w.role }})</option>
              }
            </select>
          </span>
        }
        <span class="who">
          <span>{{ caller.email ?? 'API key ' + caller.id }}</span>
          @if (caller.kind === 'user') { <a routerLink="/account">Your account</a> }
          <button type="button" (click)="signOut()">Sign out</button>
        </span>
      }
    </header>
    @if (ws(); as ws) {
      <nav aria-label="Console sections">
        <ul>
          @for (link of links; track link.path) {
            <li><a [routerLink]="['/w', ws, link.path]" routerLinkActive="active" ariaCurrentWhenActive="page">{{ link.label }}</a></li>
          }
        </ul>
      </nav>
    }
    <main id="main" tabindex="-1">
      <router-outlet />
    </main>
  `,
})
export class AppComponent {
  protected readonly session = inject(Session);
  private readonly router = inject(Router);
  private readonly api = inject(ApiClient);
  protected readonly ws = computed(() => (this.session.caller() ? this.session.workspaceId() : null));
  protected readonly links = [
    { path: 'overview', label: 'Overview' },
    { path: 'workers', label: 'Workers' },
    { path: 'studio', label: 'Studio' },
    { path: 'runs', label: 'Runs' },
    { path: 'approvals', label: 'Approvals' },
    { path: 'notifications', label: 'Notifications' },
    { path: 'budgets', label: 'Budgets' },
    { path: 'credentials', label: 'Credentials' },
    { path: 'sandbox', label: 'Sandbox' },
    { path: 'computers', label: 'Computers' },
    { path: 'audit', label: 'Audit' },
    { path: 'admin', label: 'Admin' },
  ];

  constructor() {
    // A session that ends (expiry, sign-out elsewhere) sends the person to sign in again.
    effect(() => {
      if (this.api.unauthenticated() && !this.router.url.startsWith('/sign-in') && !this.router.url.startsWith('/setup')) {
        this.session.caller.set(null);
        void this.router.navigate(['/sign-in'], { queryParams: { next: this.router.url } });
      }
    });
  }

  protected switchWorkspace(event: Event): void {
    const id = (event.target as HTMLSelectElement).value;
    void this.router.navigate(['/w', id, 'overview']);
  }

  protected async signOut(): Promise<void> {
    await this.session.signOut();
    await this.router.navigate(['/sign-in']);
  }

  protected skipToMain(event: Event): void {
    event.preventDefault();
    document.getElementById('main')?.focus();
  }
}
