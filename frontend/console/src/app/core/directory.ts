import { Injectable, computed, inject, signal } from '@angular/core';
import { Names, type DirectoryData } from '../shared/names';
import { ApiClient } from './api';
import { Session } from './session';

const STALE_MS = 30_000;

/**
 * Names of the current workspace's workers, deployments, members and API keys, asked once and
 * shared by every page; asked again when the workspace changes, when it is older than half a
 * minute, or when a page meets an id it does not know (a worker created a moment ago).
 */
@Injectable({ providedIn: 'root' })
export class Directory {
  private readonly api = inject(ApiClient);
  private readonly session = inject(Session);
  private readonly data$ = signal<{ ws: string; at: number; value: DirectoryData } | null>(null);
  private inflight: { ws: string; promise: Promise<void> } | null = null;
  /** The directory of the workspace on screen, null until the first answer. */
  readonly data = computed(() => {
    const held = this.data$();
    return held && held.ws === this.session.workspaceId() ? held.value : null;
  });
  /** Names for the workspace on screen; empty (ids shown) until the first answer. */
  readonly names = computed(() => {
    const data = this.data();
    return data ? new Names(data) : new Names();
  });

  /** Asks for the names unless fresh ones are held; never throws (the ids stay on screen). */
  ensure(force = false): Promise<void> {
    const ws = this.session.workspaceId();
    if (!ws) return Promise.resolve();
    const held = this.data$();
    if (!force && held?.ws === ws && Date.now() - held.at < STALE_MS) return Promise.resolve();
    if (this.inflight?.ws === ws) return this.inflight.promise;
    const promise = this.api
      .get<DirectoryData>(`/api/v1/workspaces/${ws}/directory`)
      .then((value) => this.data$.set({ ws, at: Date.now(), value }))
      .catch(() => undefined)
      .finally(() => {
        if (this.inflight?.promise === promise) this.inflight = null;
      });
    this.inflight = { ws, promise };
    return promise;
  }
}
