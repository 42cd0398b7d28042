import { access, constants } from 'node:fs/promises';
import { chromium, type Browser } from 'playwright-core';
import { BrowserUnavailableError } from './browser-errors';

/**
 * Every request of a page is fetched by Node and fulfilled through interception, so Chromium
 * itself has no reason to connect anywhere. Whatever escapes interception (a redirect hop,
 * a worker's WebSocket, background traffic) meets a proxy that does not exist, with loopback
 * not exempted, and a resolver that answers nothing, so it fails instead of connecting.
 */
export const NOWHERE_NETWORK_ARGS = ['--proxy-server=http://127.0.0.1:9', '--proxy-bypass-list=<-loopback>', '--host-resolver-rules=MAP * ~NOTFOUND'];

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-gpu',
  '--disable-quic',
  // An error page would otherwise load itself again in the background, long after the action.
  '--disable-auto-reload',
  ...NOWHERE_NETWORK_ARGS,
];

function installHint(path: string): string {
  return `install it (apt-get install chromium) or set PACKETAGENT_CHROMIUM to its path (looked for ${path})`;
}

/** Whether Chromium can be started from `path`, and what is missing when not. */
export async function chromiumAvailability(path: string): Promise<{ available: boolean; detail: string }> {
  try {
    await access(path, constants.X_OK);
    return { available: true, detail: path };
  } catch {
    return { available: false, detail: `Chromium is not installed: ${installHint(path)}` };
  }
}

/** Starts one headless Chromium with no network of its own. */
export async function launchChromium(path: string): Promise<Browser> {
  const availability = await chromiumAvailability(path);
  if (!availability.available) throw new BrowserUnavailableError(availability.detail);
  try {
    return await chromium.launch({ executablePath: path, headless: true, args: CHROMIUM_ARGS });
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new BrowserUnavailableError(`Chromium did not start: ${reason}; ${installHint(path)}`, { cause: error });
  }
}
