import type { ExecLimits } from '@packetagent/contracts';
import type { PreparedExec } from '../sandbox-driver';
import { dockerContainerSpec } from './docker-container-spec';

const limits: ExecLimits = {
  wallTimeMs: 60_000,
  cpuSeconds: 30,
  memoryBytes: 512 * 1024 ** 2,
  pids: 128,
  fileSizeBytes: 64 * 1024 ** 2,
  openFiles: 256,
  outputBytes: 1024 ** 2,
  tmpBytes: 128 * 1024 ** 2,
};

function preparedExec(overrides: Partial<PreparedExec> = {}): PreparedExec {
  return {
    execId: 'run-1:step-2',
    argv: ['node', '--version'],
    workspaceDir: '/srv/workspaces/ws-1',
    cwd: '.',
    env: { PATH: '/usr/bin:/bin', HOME: '/tmp/home', LANG: 'C.UTF-8' },
    limits,
    egressDir: null,
    ...overrides,
  };
}

describe(dockerContainerSpec.name, () => {
  it('runs the argv itself, with neither a shell nor the image entrypoint', () => {
    const sut = dockerContainerSpec(preparedExec({ argv: ['sh', '-c', 'echo $HOME; rm -rf x'] }), { image: 'node:20-bookworm-slim' });

    expect(sut.Image).toBe('node:20-bookworm-slim');
    expect(sut.Cmd).toEqual(['sh', '-c', 'echo $HOME; rm -rf x']);
    expect(sut.Entrypoint).toEqual([]);
  });

  it('passes exactly the exec environment', () => {
    const sut = dockerContainerSpec(preparedExec(), { image: 'img' });

    expect(sut.Env).toEqual(['PATH=/usr/bin:/bin', 'HOME=/tmp/home', 'LANG=C.UTF-8']);
  });

  it('works in the cwd under /workspace', () => {
    expect(dockerContainerSpec(preparedExec(), { image: 'img' }).WorkingDir).toBe('/workspace');
    expect(dockerContainerSpec(preparedExec({ cwd: 'packages/app' }), { image: 'img' }).WorkingDir).toBe('/workspace/packages/app');
  });

  it('runs as nobody unless told another non-root user', () => {
    expect(dockerContainerSpec(preparedExec(), { image: 'img' }).User).toBe('65534:65534');
    expect(dockerContainerSpec(preparedExec(), { image: 'img', user: '1000:1000' }).User).toBe('1000:1000');
  });

  it.each(['root', '0', '0:0', '000:1000', 'root:root', ''])('refuses to run as root (%j)', (user) => {
    expect(() => dockerContainerSpec(preparedExec(), { image: 'img', user })).toThrow(/never runs as root/);
  });

  it('gives the container no network at all', () => {
    const sut = dockerContainerSpec(preparedExec(), { image: 'img' });

    expect(sut.NetworkDisabled).toBe(true);
    expect(sut.HostConfig?.NetworkMode).toBe('none');
  });

  it('drops every capability and privilege gain', () => {
    const host = dockerContainerSpec(preparedExec(), { image: 'img' }).HostConfig;

    expect(host?.CapDrop).toEqual(['ALL']);
    expect(host?.CapAdd).toBeUndefined();
    expect(host?.SecurityOpt).toEqual(['no-new-privileges']);
    expect(host?.Privileged).toBe(false);
  });

  it('mounts the root read-only with a bounded /tmp that allows exec and HOME inside it', () => {
    const host = dockerContainerSpec(preparedExec(), { image: 'img' }).HostConfig;

    expect(host?.ReadonlyRootfs).toBe(true);
    expect(host?.Tmpfs).toEqual({
      '/tmp': `rw,exec,nosuid,nodev,size=${limits.tmpBytes},mode=1777`,
      '/tmp/home': `rw,exec,nosuid,nodev,size=${limits.tmpBytes},mode=0700,uid=65534,gid=65534`,
    });
  });

  it('leaves HOME open to all when the user is named rather than numbered', () => {
    const host = dockerContainerSpec(preparedExec(), { image: 'img', user: 'node' }).HostConfig;

    expect(host?.Tmpfs?.['/tmp/home']).toBe(`rw,exec,nosuid,nodev,size=${limits.tmpBytes},mode=1777`);
  });

  it('binds the workspace read-write and, when present, the egress files read-only', () => {
    expect(dockerContainerSpec(preparedExec(), { image: 'img' }).HostConfig?.Binds).toEqual(['/srv/workspaces/ws-1:/workspace:rw']);
    expect(dockerContainerSpec(preparedExec({ egressDir: '/srv/egress/e-1' }), { image: 'img' }).HostConfig?.Binds).toEqual([
      '/srv/workspaces/ws-1:/workspace:rw',
      '/srv/egress/e-1:/input/egress:ro',
    ]);
  });

  it.each(['relative/dir', '/srv/a:b'])('refuses a host directory the engine would misread (%j)', (workspaceDir) => {
    expect(() => dockerContainerSpec(preparedExec({ workspaceDir }), { image: 'img' })).toThrow(/cannot bind/);
  });

  it('applies memory without swap, pids and CPUs as cgroup limits', () => {
    const host = dockerContainerSpec(preparedExec(), { image: 'img', cpus: 1.5 }).HostConfig;

    expect(host?.Memory).toBe(limits.memoryBytes);
    expect(host?.MemorySwap).toBe(limits.memoryBytes);
    expect(host?.PidsLimit).toBe(limits.pids);
    expect(host?.NanoCpus).toBe(1_500_000_000);
  });

  it('gives one CPU when none is configured', () => {
    expect(dockerContainerSpec(preparedExec(), { image: 'img' }).HostConfig?.NanoCpus).toBe(1_000_000_000);
  });

  it('applies CPU time, file size, open files and no core dumps as rlimits, the CPU hard limit a second past the soft one', () => {
    const host = dockerContainerSpec(preparedExec(), { image: 'img' }).HostConfig;

    expect(host?.Ulimits).toEqual([
      { Name: 'cpu', Soft: 30, Hard: 31 },
      { Name: 'fsize', Soft: limits.fileSizeBytes, Hard: limits.fileSizeBytes },
      { Name: 'nofile', Soft: 256, Hard: 256 },
      { Name: 'core', Soft: 0, Hard: 0 },
    ]);
  });

  it('keeps the container after it exits, labelled with its exec, attached without a TTY or stdin', () => {
    const sut = dockerContainerSpec(preparedExec(), { image: 'img' });

    expect(sut.HostConfig?.AutoRemove).toBe(false);
    expect(sut.Labels).toEqual({ 'packetagent.exec': 'run-1:step-2' });
    expect(sut).toMatchObject({ AttachStdout: true, AttachStderr: true, AttachStdin: false, Tty: false, OpenStdin: false, StdinOnce: false });
  });

  it('opens a stdin, closed at the first EOF, for an exec that asks for one, still without a TTY', () => {
    const sut = dockerContainerSpec(preparedExec({ stdin: true }), { image: 'img' });

    expect(sut).toMatchObject({ AttachStdin: true, OpenStdin: true, StdinOnce: true, Tty: false, AttachStdout: true, AttachStderr: true });
    expect(sut.HostConfig?.AutoRemove).toBe(false);
  });

  it('runs an init that reaps orphans and keeps no engine log of the output', () => {
    const host = dockerContainerSpec(preparedExec(), { image: 'img' }).HostConfig;

    expect(host?.Init).toBe(true);
    expect(host?.LogConfig).toEqual({ Type: 'none', Config: {} });
  });
});
