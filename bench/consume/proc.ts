/** CPU time of processes and of the machine, from /proc (Linux; clock ticks of 1/100 s). */
import { readdirSync, readFileSync } from 'node:fs';

const TICK_S = 0.01;

/** Fields after the command name of /proc/<pid>/stat (index 0 is the state, 11/12 utime/stime). */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** User + system CPU seconds of one process (all its threads). */
export function cpuSeconds(pid: number): number {
  const f = statFields(pid);
  return (Number(f[11]) + Number(f[12])) * TICK_S;
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
