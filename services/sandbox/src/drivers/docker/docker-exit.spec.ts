import { dockerExit } from './docker-exit';

describe(dockerExit.name, () => {
  it('keeps an exit status of 128 or less as the exit code', () => {
    expect(dockerExit(0, false)).toEqual({ exitCode: 0, signal: null, limit: null });
    expect(dockerExit(3, false)).toEqual({ exitCode: 3, signal: null, limit: null });
    expect(dockerExit(128, false)).toEqual({ exitCode: 128, signal: null, limit: null });
  });

  it('reads a status above 128 as death by signal', () => {
    expect(dockerExit(137, false)).toEqual({ exitCode: null, signal: 'SIGKILL', limit: null });
    expect(dockerExit(143, false)).toEqual({ exitCode: null, signal: 'SIGTERM', limit: null });
  });

  it('names the CPU time limit on SIGXCPU (152)', () => {
    expect(dockerExit(152, false)).toEqual({ exitCode: null, signal: 'SIGXCPU', limit: 'cpu_time' });
  });

  it('names the file size limit on SIGXFSZ (153)', () => {
    expect(dockerExit(153, false)).toEqual({ exitCode: null, signal: 'SIGXFSZ', limit: 'file_size' });
  });

  it('names the memory limit when the kernel OOM-killed a process, whatever the status', () => {
    expect(dockerExit(137, true)).toEqual({ exitCode: null, signal: 'SIGKILL', limit: 'memory' });
    expect(dockerExit(1, true)).toEqual({ exitCode: 1, signal: null, limit: 'memory' });
  });

  it('keeps a status above 128 that names no signal as the exit code', () => {
    expect(dockerExit(255, false)).toEqual({ exitCode: 255, signal: null, limit: null });
  });
});
