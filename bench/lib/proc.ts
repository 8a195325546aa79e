/** Per-process and machine figures from /proc (Linux; CPU in clock ticks of 1/100 s), for the benchmarks. */
import { readdirSync, readFileSync } from 'node:fs';

const TICK_S = 0.01;

/** Fields after the command name of /proc/<pid>/stat (index 0 is the state, 11/12 utime/stime). */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** User + system CPU seconds of one process (all its threads) so far; NaN when unknown or gone. */
export function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const f = statFields(pid);
    return (Number(f[11]) + Number(f[12])) * TICK_S;
  } catch {
    return Number.NaN;
  }
}

/** A field of /proc/<pid>/status in bytes (0 when the process is gone). */
export function procStatus(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * CPU seconds of a PostgreSQL server: the postmaster, its live children (backends, walwriter,
 * checkpointer, ...) and, through the postmaster's cutime/cstime, the children it has reaped.
 */
export function postgresCpuSeconds(postmasterPid: number): number {
  const f = statFields(postmasterPid);
  let ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const c = statFields(Number(name));
      if (Number(c[1]) === postmasterPid) ticks += Number(c[11]) + Number(c[12]);
    } catch {
      // exited meanwhile
    }
  }
  return ticks * TICK_S;
}

/** Busy and total CPU ticks of the whole machine (first line of /proc/stat). */
export function machineTicks(): { busy: number; total: number } {
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const n = values.slice(0, 8).map(Number); // user nice system idle iowait irq softirq steal
  const total = n.reduce((s, v) => s + v, 0);
  return { busy: total - n[3]! - n[4]!, total };
}
