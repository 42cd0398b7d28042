/** The fields of the engine's GET /info that say which cgroup limits it can apply. */
export interface EngineInfo {
  OSType?: string;
  MemoryLimit?: boolean;
  SwapLimit?: boolean;
  PidsLimit?: boolean;
  CpuCfsQuota?: boolean;
}

/** Limits the engine says it cannot apply here, each with what follows from it. */
export function unenforcedLimits(info: EngineInfo): string[] {
  const unenforced: string[] = [];
  if (info.MemoryLimit === false) unenforced.push('memory: the engine has no memory cgroup here, so a command may use all of the host memory');
  else if (info.SwapLimit === false) unenforced.push('memory: the kernel does not account swap here, so a command may swap past its memory limit');
  if (info.PidsLimit === false) unenforced.push('pids: the engine has no pids cgroup here, so only the wall time stops a fork bomb');
  if (info.CpuCfsQuota === false) unenforced.push('cpus: the engine has no CFS quota here, so a command may use every CPU (its CPU time is still limited)');
  return unenforced;
}
