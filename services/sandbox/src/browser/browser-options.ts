export interface BrowserOptions {
  /** The Chromium executable (PACKETAGENT_CHROMIUM, else Debian's /usr/bin/chromium). */
  chromiumPath: string;
  /** A run's context unused for this long, in milliseconds, is closed (its cookies and storage go with it). */
  idleTimeoutMs: number;
  /** Exact `host:port` pairs the page may reach although they resolve to private addresses. */
  allowPrivate: string[];
  /** Most UTF-8 bytes of page text a read answers. */
  maxTextBytes: number;
  /** Most bytes of one response (each request of the page is fetched and cut off separately). */
  maxResponseBytes: number;
  viewport: { width: number; height: number };
}

export const DEFAULT_CHROMIUM_PATH = '/usr/bin/chromium';

export const DEFAULT_BROWSER_OPTIONS: Omit<BrowserOptions, 'chromiumPath'> = {
  idleTimeoutMs: 10 * 60_000,
  allowPrivate: [],
  maxTextBytes: 32 * 1024,
  maxResponseBytes: 16 * 1024 * 1024,
  viewport: { width: 1280, height: 800 },
};

/** The defaults with `overrides` applied; the Chromium path comes from the environment when not given. */
export function browserOptions(overrides: Partial<BrowserOptions> = {}, env: NodeJS.ProcessEnv = process.env): BrowserOptions {
  return {
    chromiumPath: env['PACKETAGENT_CHROMIUM'] || DEFAULT_CHROMIUM_PATH,
    ...DEFAULT_BROWSER_OPTIONS,
    ...overrides,
  };
}
