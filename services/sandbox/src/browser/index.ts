export { BrowserSessions, type BrowserSessionsDeps, type RunBrowserKey } from './browser-sessions';
export { browserOptions, DEFAULT_BROWSER_OPTIONS, DEFAULT_CHROMIUM_PATH, type BrowserOptions } from './browser-options';
export { BrowserActionErrorCodes, BrowserUnavailableError, type BrowserActionErrorCode } from './browser-errors';
export { chromiumAvailability, CHROMIUM_ARGS } from './chromium-launcher';
export type { ParsedBrowserActRequest } from './page-actions';
