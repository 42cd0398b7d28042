// The Debian packages `npm test` needs on a fresh machine: installed when this runs as root with
// apt-get (as on CI machines and containers), otherwise named with the exact command to run.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

function onPath(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** Each need: how to tell it is there, and the Debian package that provides it. */
const NEEDS = [
  { what: 'Chromium (the console browser tests)', present: () => existsSync(process.env.PACKETAGENT_CHROMIUM ?? '/usr/bin/chromium'), pkg: 'chromium' },
  { what: 'bubblewrap (the sandbox run_command runs in)', present: () => existsSync('/usr/bin/bwrap'), pkg: 'bubblewrap' },
  { what: 'OpenSSH server (the computers tests run their own sshd)', present: () => existsSync('/usr/sbin/sshd'), pkg: 'openssh-server' },
  { what: 'OpenSSH client (the computers benchmark compares against ssh)', present: () => existsSync('/usr/bin/ssh'), pkg: 'openssh-client' },
  { what: 'OpenSSL (the notification tests make a test CA for their SMTP and HTTPS peers)', present: () => onPath('openssl'), pkg: 'openssl' },
  { what: 'nats-server', present: () => onPath('nats-server'), pkg: 'nats-server' },
  { what: 'redis-server', present: () => onPath('redis-server'), pkg: 'redis-server' },
  { what: 'promtool (the metrics test checks the /metrics exposition with it)', present: () => onPath('promtool'), pkg: 'prometheus' },
];

/** Installs what is missing, or stops with the command that would. Packages in `skip` are not needed this time. */
export function ensureSystemPackages({ log, skip = [] }) {
  const missing = NEEDS.filter((need) => !skip.includes(need.pkg) && !need.present());
  if (missing.length === 0) return;
  const packages = missing.map((need) => need.pkg);
  const command = `apt-get update && apt-get install -y ${packages.join(' ')}`;
  const canInstall = process.getuid?.() === 0 && onPath('apt-get');
  if (!canInstall) {
    throw new Error(`Missing: ${missing.map((need) => need.what).join(', ')}. Install with: sudo sh -c '${command}' (or set PACKETAGENT_CHROMIUM to a Chromium binary).`);
  }
  log(`Missing ${missing.map((need) => need.what).join(', ')}: installing ${packages.join(' ')} from Debian...`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update', '-qq'], ['install', '-y', '-qq', ...packages]]) {
    const result = spawnSync('apt-get', args, { stdio: 'inherit', env });
    if (result.status !== 0) throw new Error(`apt-get ${args[0]} failed (exit ${result.status}); install by hand with: ${command}`);
  }
  const still = missing.filter((need) => !need.present());
  if (still.length) throw new Error(`Still missing after apt-get: ${still.map((need) => need.what).join(', ')}`);
}
