/**
 * The command line: `<command> [<sub>] [--flag value | --flag]...`, kubectl's `-n NS` (`-nNS`,
 * `-n=NS`) and `-A`; unknown flags, short ones included, are refused with a one-line message
 * naming them. A switch takes `=true` or `=false` (`--commit=false` is no commit).
 */
export interface Args {
  command: string[];
  flags: Map<string, string>;
}

/** Flags that take no value. */
const SWITCHES = new Set(['all-namespaces', 'dry-run', 'commit', 'help']);

export function parseArgs(argv: string[], known: ReadonlySet<string>): Args {
  const command: string[] = [];
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-A') flags.set('all-namespaces', 'true');
    else if (/^-n/.test(arg)) {
      const value = arg === '-n' ? argv[++i] : arg.slice(2).replace(/^=/, '');
      if (!value || value.startsWith('-')) throw new Error('-n needs a namespace');
      flags.set('namespace', value);
    } else if (/^-[^-]/.test(arg)) throw new Error(`unknown flag ${arg} (see kubectl observatory --help)`);
    else if (arg.startsWith('--')) {
      const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
      if (!known.has(name)) throw new Error(`unknown flag --${name} (see kubectl observatory --help)`);
      if (SWITCHES.has(name)) {
        if (inline !== undefined && inline !== 'true' && inline !== 'false')
          throw new Error(`--${name} takes no value, or =true or =false`);
        if (inline === 'false') flags.delete(name);
        else flags.set(name, 'true');
      } else {
        const value = inline ?? argv[++i];
        if (value === undefined || value === '') throw new Error(`--${name} needs a value`);
        flags.set(name, value);
      }
    } else command.push(arg);
  }
  return { command, flags };
}

/** A positive integer flag, or undefined when absent. */
export function intFlag(args: Args, name: string): number | undefined {
  const raw = args.flags.get(name);
  if (raw === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(raw))
    throw new Error(`--${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
}
