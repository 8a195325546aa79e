/**
 * The one report of the benchmarks: `bench/results/latest.md` (`BENCH_REPORT` names another file,
 * e.g. for a smoke run). Each bench replaces its own section when it runs and leaves the others, so
 * after `make bench` every section is from that run; a bench run alone refreshes only its own.
 * Every section opens with when it ran, the machine, its load and the command: a figure is read
 * against the reference measured in the same section, never against another section's run.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { repoRoot } from '@event-observatory/devstack';

/** Section order in the file: `make bench`'s order, then the benches run by hand. */
const ORDER = [
  'consume',
  'hotpath',
  'rollup',
  'search',
  'search-auth',
  'kafkajs-encode',
  'ingest',
  'ingest-floor',
  'controller',
] as const;
export type BenchName = (typeof ORDER)[number];

const reportFile = () => process.env.BENCH_REPORT ?? join(repoRoot(), 'bench/results/latest.md');

const HEADER = `# Benchmark figures

Written by the benchmarks of \`bench/\`: \`make bench\` runs consume, hotpath, rollup, search,
search-auth and kafkajs-encode, each replacing its own section; the ingest sweep and floor (\`bench/ingest\`) are run
by hand and replace theirs. Each section says when it ran, on what machine, at what load and with
which command, and sets each figure beside the reference measured in the same run. Earlier figures
are in git's history of this file.
`;

const marks = (name: BenchName) => [`<!-- bench:${name} -->`, `<!-- /bench:${name} -->`] as const;
const loads = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ');

/** The command that ran this bench: its BENCH_* settings and the script, as run from the repo root. */
function command(): string {
  const settings = Object.entries(process.env)
    .filter(([k]) => k.startsWith('BENCH_') && k !== 'BENCH_REPORT')
    // A folder outside the repository is named from its root, where the command runs.
    .map(([k, v]) => `${k}=${v && isAbsolute(v) ? relative(repoRoot(), v) : v} `)
    .join('');
  return `${settings}node --conditions=source --import tsx ${relative(repoRoot(), process.argv[1] ?? '')}`;
}

/**
 * A numeric `BENCH_<name>` setting, `def` when unset; anything but a finite number stops the run
 * with one line naming the variable and its value.
 */
export function benchNumber(name: string, def: number): number {
  const raw = process.env[`BENCH_${name}`];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`BENCH_${name} must be a number, got ${JSON.stringify(raw)}`);
  return n;
}

/**
 * Starts the clock of one bench's run (its start time and load); `write` puts its report, a
 * Markdown text whose first line is its `# title`, into its section.
 */
export function benchRun(name: BenchName) {
  const started = new Date();
  const startLoad = loads();
  return {
    /** `opts.file` (absolute, or from the repository's root): a file of its own, written whole, instead of a section. */
    write(markdown: string, opts: { kafkaVersion?: string; file?: string } = {}): string {
      const [title, ...rest] = markdown
        .trim()
        .replace(/^(#+) /gm, opts.file ? '$1 ' : '#$1 ')
        .split('\n');
      const cpu = cpus();
      const machine = [
        `${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown'})`,
        `${(totalmem() / 2 ** 30).toFixed(0)} GiB`,
        `Node ${process.version}`,
        ...(opts.kafkaVersion ? [`Kafka ${opts.kafkaVersion}`] : []),
      ].join(', ');
      const body = [
        title,
        '',
        `Run ${started.toISOString()} to ${new Date().toISOString()} on ${machine}; load average ${startLoad} at the start, ${loads()} at the end.`,
        `Command: \`${command()}\``,
        ...rest,
      ];
      if (opts.file) {
        const own = resolve(repoRoot(), opts.file);
        writeFileSync(own, `${body.join('\n')}\n`);
        console.log(`${body.join('\n')}\n\nwritten to ${own}`);
        return body.join('\n');
      }
      const section = [marks(name)[0], ...body, marks(name)[1]].join('\n');
      const file = reportFile();
      const sections = new Map<BenchName, string>();
      const old = existsSync(file) ? readFileSync(file, 'utf8') : '';
      for (const other of ORDER) {
        const [open, close] = marks(other);
        const at = old.indexOf(open);
        const end = old.indexOf(close, at);
        if (at >= 0 && end > at) sections.set(other, old.slice(at, end + close.length));
      }
      sections.set(name, section);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(
        file,
        `${[HEADER.trim(), ...ORDER.flatMap((n) => sections.get(n) ?? [])].join('\n\n')}\n`,
      );
      console.log(`${section}\n\nwritten to ${file}`);
      return section;
    },
  };
}
