import type { Capabilities, ComputerRecord } from '@packetagent/contracts';
import { shellQuote } from './ssh/remote-script';
import { SshConnectError, SshLink, type LinkTimings } from './ssh/ssh-link';

/** Programs a probe looks for on the computer's PATH. */
export const PROBED_TOOLS = ['git', 'make', 'node', 'npm', 'python3', 'docker', 'go', 'cargo', 'java', 'gcc', 'base64', 'setsid'] as const;

const CAPABILITIES_SCRIPT = [
  'uname -s',
  'uname -m',
  '(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 0)',
  `for t in ${PROBED_TOOLS.join(' ')}; do command -v "$t" >/dev/null 2>&1 && echo "tool:$t"; done`,
].join('; ');

export interface ProbeResult {
  ok: boolean;
  affirmative: boolean;
  detail: string;
  probedAt: Date;
  capabilities: Capabilities | null;
  /** The key presented when it is not a pinned one. */
  presentedKey: string | null;
}

export function parseCapabilities(stdout: string): Capabilities {
  const lines = stdout.split('\n').map((line) => line.trim()).filter(Boolean);
  const [os = 'unknown', arch = 'unknown', cpus = '0'] = lines;
  return { os, arch, cpus: Number.parseInt(cpus, 10) || 0, tools: lines.filter((line) => line.startsWith('tool:')).map((line) => line.slice(5)) };
}

/** Connects afresh (an old session surviving a stopped server proves nothing), verifies the host key, reads capabilities. */
export async function probeComputer(record: ComputerRecord, privateKey: () => Promise<string>, timings: LinkTimings): Promise<ProbeResult> {
  const probedAt = new Date();
  const ssh = record.ssh;
  if (!ssh) return { ok: false, affirmative: false, detail: 'not an ssh computer', probedAt, capabilities: null, presentedKey: null };
  let key: string;
  try {
    key = await privateKey();
  } catch (error) {
    return { ok: false, affirmative: false, detail: `the key ${ssh.keyCredential} could not be read: ${error instanceof Error ? error.message : String(error)}`, probedAt, capabilities: null, presentedKey: null };
  }
  let link: SshLink;
  try {
    link = await SshLink.open(ssh, key, timings);
  } catch (error) {
    if (error instanceof SshConnectError) return { ok: false, affirmative: error.affirmative, detail: error.message, probedAt, capabilities: null, presentedKey: error.presentedKey };
    return { ok: false, affirmative: false, detail: error instanceof Error ? error.message : String(error), probedAt, capabilities: null, presentedKey: null };
  }
  try {
    const { code, stdout } = await link.run(`/bin/sh -c ${shellQuote(CAPABILITIES_SCRIPT)}`, timings.connectTimeoutMs);
    if (code !== 0) return { ok: false, affirmative: true, detail: `the capability check exited ${code}: is /bin/sh there?`, probedAt, capabilities: null, presentedKey: null };
    const capabilities = parseCapabilities(stdout);
    return { ok: true, affirmative: false, detail: `${capabilities.os} ${capabilities.arch}, ${capabilities.cpus} CPUs`, probedAt, capabilities, presentedKey: null };
  } catch (error) {
    return { ok: false, affirmative: false, detail: `connected, but the capability check failed: ${error instanceof Error ? error.message : String(error)}`, probedAt, capabilities: null, presentedKey: null };
  } finally {
    link.close();
  }
}
