import { spawnSync } from 'node:child_process';
import { startTestApp, type TestApp } from '../testing/app.testkit';
import { MetricsController } from './metrics.controller';

const PROMTOOL = spawnSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' }).stdout.trim();
const withPromtool = PROMTOOL ? it : it.skip;
if (!PROMTOOL) console.warn('promtool is not installed (Debian package prometheus): the /metrics exposition check is skipped');

describe(MetricsController.name, () => {
  let sut: TestApp;

  beforeAll(async () => {
    sut = await startTestApp({ PACKETAGENT_SUPERVISOR_ENABLED: 'true' });
  });
  afterAll(() => sut?.close());

  withPromtool('serves an exposition that promtool check metrics accepts without a finding', async () => {
    const scrape = await fetch(`${sut.baseUrl}/metrics`);
    const exposition = await scrape.text();
    expect(scrape.status).toBe(200);
    expect(exposition).toContain('packetagent_relay_backlog_events');

    const check = spawnSync(PROMTOOL, ['check', 'metrics'], { input: exposition, encoding: 'utf8' });

    expect({ status: check.status, findings: `${check.stdout}${check.stderr}`.trim() }).toEqual({ status: 0, findings: '' });
  });

  it('reports active handles by type only, not also summed under a counter name', async () => {
    const exposition = await (await fetch(`${sut.baseUrl}/metrics`)).text();
    expect(exposition).toMatch(/^nodejs_active_handles\{type="[A-Za-z]+"\} \d+$/m);
    expect(exposition).not.toMatch(/^nodejs_active_(handles|requests|resources)_total/m);
  });
});
