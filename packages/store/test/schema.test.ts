/**
 * schema.ts against what the migrations create, on the devstack PostgreSQL. Both sides are put in
 * PostgreSQL's own words: the drizzle tables are created in a scratch schema (inside a transaction
 * that is rolled back) from their drizzle description alone, then both schemas are read from the
 * catalog with the same query: columns (type, nullability, default, generation expression,
 * identity), primary keys, unique and check constraints.
 */
import { is, SQL } from 'drizzle-orm';
import { getTableConfig, integer, PgDialect, type PgTable, text } from 'drizzle-orm/pg-core';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { eventsSchema, schema } from '../src/index.js';
import { useMigratedDatabase } from './migrated-database.js';

const PROBE = 'drizzle_probe';
const dialect = new PgDialect();

const db = useMigratedDatabase('store_schema');

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;
// Column references unqualified, as DDL needs them.
const render = (expr: SQL) => dialect.sqlToQuery(expr, 'indexes').sql;

function literal(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return `'${text.replaceAll("'", "''")}'`;
}

/** `CREATE TABLE` in `into` from nothing but the drizzle description of `table`. */
function createTableSql(table: PgTable, into: string): string {
  const config = getTableConfig(table);
  const parts = config.columns.map((col) => {
    let def = `${ident(col.name)} ${col.getSQLType()}`;
    if (col.generatedIdentity) {
      def += ` GENERATED ${col.generatedIdentity.type === 'always' ? 'ALWAYS' : 'BY DEFAULT'} AS IDENTITY`;
    }
    if (col.generated) def += ` GENERATED ALWAYS AS (${render(col.generated.as as SQL)}) STORED`;
    else if (col.default !== undefined) {
      def += ` DEFAULT ${is(col.default, SQL) ? render(col.default) : literal(col.default)}`;
    }
    return col.notNull ? `${def} NOT NULL` : def;
  });
  const primary = [
    ...config.columns.filter((c) => c.primary).map((c) => c.name),
    ...config.primaryKeys.flatMap((k) => k.columns.map((c) => c.name)),
  ];
  if (primary.length > 0) parts.push(`PRIMARY KEY (${primary.map(ident).join(', ')})`);
  for (const u of config.uniqueConstraints) {
    const name = u.getName();
    const columns = u.columns.map((c) => ident(c.name)).join(', ');
    parts.push(`${name ? `CONSTRAINT ${ident(name)} ` : ''}UNIQUE (${columns})`);
  }
  for (const c of config.checks) parts.push(`CONSTRAINT ${ident(c.name)} CHECK (${render(c.value)})`);
  return `CREATE TABLE ${ident(into)}.${ident(config.name)} (\n  ${parts.join(',\n  ')}\n)`;
}

interface Description {
  columns: Record<string, unknown>[];
  constraints: Record<string, unknown>[];
}

/** The tables of `schemaName` (partitions left out), as the catalog tells them. */
async function describeSchema(db: pg.ClientBase, schemaName: string): Promise<Description> {
  const { rows: columns } = await db.query(
    `SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type,
            a.attnotnull AS not_null,
            CASE WHEN a.attgenerated = '' THEN pg_get_expr(d.adbin, d.adrelid) END AS default,
            CASE WHEN a.attgenerated <> '' THEN pg_get_expr(d.adbin, d.adrelid) END AS generated,
            a.attidentity AS identity
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
       LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
      ORDER BY 1, 2`,
    [schemaName],
  );
  const { rows: constraints } = await db.query(
    `SELECT c.relname AS table, k.conname AS name, pg_get_constraintdef(k.oid) AS definition
       FROM pg_constraint k
       JOIN pg_class c ON c.oid = k.conrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND k.contype IN ('p', 'u', 'c') AND NOT c.relispartition
      ORDER BY 1, 2`,
    [schemaName],
  );
  return { columns, constraints };
}

/** The migrated `events` schema, and the same tables created from `tables`' drizzle descriptions. */
async function compare(tables: readonly PgTable[]): Promise<{ migrated: Description; drizzle: Description }> {
  const client = await db().connect();
  try {
    await client.query('BEGIN');
    await client.query(`CREATE SCHEMA ${PROBE}`);
    for (const table of tables) await client.query(createTableSql(table, PROBE));
    return { migrated: await describeSchema(client, 'events'), drizzle: await describeSchema(client, PROBE) };
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

describe('schema.ts', () => {
  it('describes every table of the events schema exactly as the migrations create it', async () => {
    const tables = Object.values(schema);
    expect(new Set(tables.map((t) => getTableConfig(t).schema))).toEqual(new Set(['events']));
    const { migrated, drizzle } = await compare(tables);
    expect(migrated.columns.length).toBeGreaterThan(40);
    expect(drizzle.columns).toEqual(migrated.columns);
    expect(drizzle.constraints).toEqual(migrated.constraints);
  });

  it('is caught when it drifts (a nullable column, a wrong type, a missing table)', async () => {
    const drifted = eventsSchema.table('consumer_checkpoint', {
      consumerGroup: text('consumer_group').notNull().primaryKey(),
      topic: text('topic').notNull(),
      partition: integer('partition').notNull(),
      nextOffset: integer('next_offset'),
    });
    const others = Object.values(schema).filter((t) => getTableConfig(t).name !== 'consumer_checkpoint');
    const { migrated, drizzle } = await compare([...others.slice(1), drifted]);
    const ofCheckpoint = (d: Description) => d.columns.filter((c) => c.table === 'consumer_checkpoint');
    expect(ofCheckpoint(drizzle)).not.toEqual(ofCheckpoint(migrated));
    expect(ofCheckpoint(drizzle).find((c) => c.column === 'next_offset')).toMatchObject({
      type: 'integer',
      not_null: false,
    });
    expect(drizzle.constraints).not.toEqual(migrated.constraints);
    expect(new Set(drizzle.columns.map((c) => c.table))).not.toContain(getTableConfig(others[0]!).name);
  });
});
