import { Injectable, signal } from '@angular/core';
import { toProblem, type Problem } from '../shared/problem';
import { takePrefetched } from './prefetch';

/** A failed API call, carrying the problem+json answer. */
export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.title);
    this.name = 'ApiError';
  }
}

const CSRF_STORAGE_KEY = 'pa.csrf';

export interface RequestOptions {
  body?: unknown;
  /** Sent as is with this content type (a YAML definition); `body` is JSON otherwise. */
  raw?: { text: string; contentType: string };
}

/**
 * Every call of the console goes through here: same-origin cookie session, the CSRF header
 * on changes (the token the login answer gave), problem+json turned into ApiError.
 */
@Injectable({ providedIn: 'root' })
export class ApiClient {
  /** Set when any call answers 401: the shell sends the person to sign in. */
  readonly unauthenticated = signal(false);
  // localStorage, not sessionStorage: a tab opened from the console (an approval from a
  // run page) shares the session cookie and needs the same token.
  private csrfToken: string | null = localStorage.getItem(CSRF_STORAGE_KEY);

  setCsrfToken(token: string | null): void {
    this.csrfToken = token;
    if (token) localStorage.setItem(CSRF_STORAGE_KEY, token);
    else localStorage.removeItem(CSRF_STORAGE_KEY);
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  post<T>(path: string, body: unknown = {}, options: Omit<RequestOptions, 'body'> = {}): Promise<T> {
    return this.request<T>('POST', path, { ...options, body });
  }

  put<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PUT', path, { body });
  }

  delete(path: string): Promise<void> {
    return this.request<void>('DELETE', path);
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
    let body: string | undefined;
    if (options.raw) {
      headers['content-type'] = options.raw.contentType;
      body = options.raw.text;
    } else if (options.body !== undefined && method !== 'GET') {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    if (method !== 'GET' && this.csrfToken) headers['x-csrf-token'] = this.csrfToken;
    let response: Response;
    try {
      response = await ((method === 'GET' && takePrefetched(path)) || fetch(path, { method, headers, body, credentials: 'same-origin' }));
    } catch {
      throw new ApiError(toProblem(0, null));
    }
    const text = await response.text();
    let parsed: unknown = null;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    if (!response.ok) {
      if (response.status === 401 && !path.startsWith('/api/v1/auth/login')) this.unauthenticated.set(true);
      throw new ApiError(toProblem(response.status, parsed, response.statusText));
    }
    return parsed as T;
  }
}

/** The problem of any error thrown by a call, for error states. */
export function problemOf(error: unknown): Problem {
  if (error instanceof ApiError) return error.problem;
  return toProblem(0, { title: 'Unexpected error', detail: error instanceof Error ? error.message : String(error) });
}
