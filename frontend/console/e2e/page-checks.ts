import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';

/** What the browser suites look at every page with: axe-core's findings, and whether it is wider than the screen. */

export const DESKTOP = { width: 1280, height: 860 };
export const PHONE = { width: 390, height: 844 };

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** axe-core's violations on the page as it is. */
export async function runAxe(page: Page): Promise<AxeViolation[]> {
  // Evaluated over the DevTools protocol, so the page's CSP (script-src 'self') stays as served.
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    const scope = globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> }; document: unknown };
    return (await scope.axe.run(scope.document, { resultTypes: ['violations'] })).violations;
  });
}

export const isSerious = (violation: AxeViolation): boolean => violation.impact === 'serious' || violation.impact === 'critical';

/** How far the page is wider than the screen, and the widest elements that make it so. */
export async function overflow(page: Page): Promise<{ by: number; culprits: string[] }> {
  return page.evaluate(() => {
    const width = window.innerWidth;
    const by = (document.scrollingElement?.scrollWidth ?? 0) - width;
    const culprits = [...document.querySelectorAll('body *')]
      .filter((element) => element.getBoundingClientRect().right > width + 1)
      .slice(0, 5)
      .map((element) => `${element.tagName.toLowerCase()}${element.className ? '.' + String(element.className).split(' ').join('.') : ''} (${Math.round(element.getBoundingClientRect().right)} px)`);
    return { by, culprits };
  });
}
