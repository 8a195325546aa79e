/**
 * Validation of a dashboard against Grafana's published dashboard schema. `@grafana/schema` (npm,
 * released with Grafana) ships the schema as TypeScript types generated from Grafana's CUE
 * definitions, not as JSON Schema; so the dashboard is type-checked by the TypeScript compiler as
 * an object literal of type `Dashboard`: unknown keys (excess property checks), wrong types and
 * missing required fields are errors. String enums are widened to their literal values, which is
 * what JSON can hold.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import ts from 'typescript';

const require = createRequire(import.meta.url);
const schemaTypes = join(dirname(require.resolve('@grafana/schema/package.json')), 'dist/types/index.d.ts');

const CHECK = `import type { Dashboard } from '@grafana/schema';
type Json<T> = T extends string
  ? \`\${T}\`
  : T extends readonly (infer U)[]
    ? Json<U>[]
    : T extends object
      ? { [K in keyof T]: Json<T[K]> }
      : T;
export const dashboard: Json<Dashboard> = `;

/** The compiler's errors for `json` as a Grafana dashboard (empty: valid). */
export function dashboardSchemaErrors(json: unknown): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'grafana-schema-'));
  try {
    const file = join(dir, 'dashboard.ts');
    writeFileSync(file, `${CHECK}${JSON.stringify(json, null, 2)};\n`);
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      lib: ['lib.es2022.d.ts'],
      types: [],
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      paths: { '@grafana/schema': [schemaTypes] },
    });
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const where =
        d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
      const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      return where ? `line ${where.line + 1}: ${text}` : text;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
