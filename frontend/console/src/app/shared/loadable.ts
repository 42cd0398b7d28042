import { signal } from '@angular/core';
import { problemOf } from '../core/api';
import type { Problem } from './problem';

export type LoadStatus = 'loading' | 'ready' | 'error';

/**
 * The three states every page shows: loading, an error with its problem, or the value. Only
 * the latest reload's answer lands, so a slow earlier answer never overwrites a newer one.
 */
export class Loadable<T> {
  readonly status = signal<LoadStatus>('loading');
  readonly value = signal<T | null>(null);
  readonly problem = signal<Problem | null>(null);
  private generation = 0;

  constructor(private readonly fetcher: () => Promise<T>) {}

  /** `quiet` keeps the current value on screen while refreshing (live pages). */
  async reload(quiet = false): Promise<void> {
    const mine = ++this.generation;
    if (!quiet || this.status() !== 'ready') this.status.set('loading');
    try {
      const value = await this.fetcher();
      if (mine !== this.generation) return;
      this.value.set(value);
      this.problem.set(null);
      this.status.set('ready');
    } catch (error) {
      if (mine !== this.generation) return;
      this.problem.set(problemOf(error));
      this.status.set('error');
    }
  }
}

export function loadable<T>(fetcher: () => Promise<T>, start = true): Loadable<T> {
  const created = new Loadable(fetcher);
  if (start) void created.reload();
  return created;
}
