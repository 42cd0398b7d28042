// The "Try it without an API key" demo on any port. The health-report worker and its script name
// the server they fetch the health of (http://127.0.0.1:8484 as written); this renders both for
// the port PacketAgent listens on, then starts the webhook sink and `npm start` with what the
// demo needs: the scripts directory, the private addresses http_fetch may reach, and the sink as
// the Slack webhook base.
//
//   node examples/health-report-demo.mjs           render, then start the sink and PacketAgent
//   node examples/health-report-demo.mjs render    render only, and print the variables to start a server with
//
// PACKETAGENT_PORT (default 8484), PACKETAGENT_DEMO_SINK_PORT (default 8486) and
// PACKETAGENT_DATA_DIR (default .data) choose where; the rendered files go to <data dir>/demo/.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Where the example's files say the server is, as `host:port` (in URLs and in the text posted). */
const WRITTEN_HOST = '127.0.0.1:8484';

function port(name, fallback) {
  const value = process.env[name] || String(fallback);
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 65_535) {
    process.stderr.write(`error: ${name} must be a port number (1 to 65535), not "${value}"\n`);
    process.exit(1);
  }
  return Number(value);
}

const PORT = port('PACKETAGENT_PORT', 8484);
const SINK_PORT = port('PACKETAGENT_DEMO_SINK_PORT', 8486);
const DATA = resolve(process.env.PACKETAGENT_DATA_DIR || join(ROOT, '.data'));
const DEMO = join(DATA, 'demo');
const ORIGIN = `http://127.0.0.1:${PORT}`;
const SINK = `http://127.0.0.1:${SINK_PORT}`;

/** The example's files with every mention of the server they were written for pointed at this one. */
function render() {
  const at = (text) => text.replaceAll(WRITTEN_HOST, `127.0.0.1:${PORT}`);
  const worker = join(DEMO, 'health-report.worker.yaml');
  const scripts = join(DEMO, 'scripts');
  mkdirSync(scripts, { recursive: true });
  writeFileSync(worker, at(readFileSync(join(ROOT, 'examples/health-report.worker.yaml'), 'utf8')));
  writeFileSync(join(scripts, 'health-report.yaml'), at(readFileSync(join(ROOT, 'examples/scripts/health-report.yaml'), 'utf8')));
  return { worker, scripts };
}

function serverEnv(scripts) {
  const allowed = [process.env.PACKETAGENT_HTTP_ALLOW_PRIVATE, `127.0.0.1:${PORT}`, `127.0.0.1:${SINK_PORT}`].filter(Boolean).join(',');
  return {
    PACKETAGENT_PORT: String(PORT),
    PACKETAGENT_SCRIPTS_DIR: scripts,
    PACKETAGENT_HTTP_ALLOW_PRIVATE: allowed,
    PACKETAGENT_SLACK_WEBHOOK_BASE_URL: SINK,
  };
}

function steps(worker) {
  const file = relative(process.cwd(), worker) || worker;
  return [
    `In another terminal, after the first-run setup (Quick start), with PACKETAGENT_WORKSPACE and PACKETAGENT_API_KEY set:`,
    `  export PACKETAGENT_API_URL=${ORIGIN}`,
    `  echo https://hooks.slack.com/services/T000/B000/demo | npx packetagent credential set ops_webhook`,
    `  npx packetagent worker apply -f ${file}`,
    `  npx packetagent deploy health-report`,
    `  npx packetagent run start <deployment-id>`,
    `  npx packetagent attention list --state open      # the post waits for you`,
    `  npx packetagent approve <attention-id>`,
    `  npx packetagent run get <run-id>                 # state: succeeded; the sink prints the post`,
  ];
}

const { worker, scripts } = render();
const env = serverEnv(scripts);

if (process.argv[2] === 'render') {
  process.stdout.write(`${[`rendered ${worker}`, `rendered ${join(scripts, 'health-report.yaml')}`, 'start PacketAgent with:', ...Object.entries(env).map(([name, value]) => `  ${name}=${value}`)].join('\n')}\n`);
  process.exit(0);
}
if (process.argv[2] !== undefined) {
  process.stderr.write(`error: unknown argument "${process.argv[2]}" (usage: node examples/health-report-demo.mjs [render])\n`);
  process.exit(1);
}

/** The pid of an `npm start` running from this data directory, or null. */
function runningServer() {
  try {
    const pid = Number(readFileSync(join(DATA, 'packetagent.pid'), 'utf8'));
    if (!pid) return null;
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

// One `npm start` per data directory: one already running lacks the demo's settings.
const running = runningServer();
if (running) {
  process.stderr.write(`error: PacketAgent is already running from ${DATA} (pid ${running}) without the demo's settings: stop it (Ctrl-C in its terminal), then run this again.\n`);
  process.exit(1);
}

process.stdout.write(`${[`health-report demo: PacketAgent on ${ORIGIN}, webhook sink on ${SINK}`, ...steps(worker), ''].join('\n')}\n`);
const sink = spawn(process.execPath, [join(ROOT, 'examples/webhook-sink.mjs'), String(SINK_PORT)], { cwd: ROOT, stdio: 'inherit' });
const server = spawn(process.execPath, [join(ROOT, 'tools/dev/start.mjs')], { cwd: ROOT, env: { ...process.env, ...env }, stdio: 'inherit' });
// Ctrl-C reaches both children from the terminal; SIGTERM is passed on to them.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => {
  server.kill('SIGTERM');
  sink.kill('SIGTERM');
});
sink.once('exit', (code) => {
  if (code) server.kill('SIGTERM');
});
server.once('exit', (code) => {
  sink.kill('SIGTERM');
  process.exitCode = code ?? 1;
});
