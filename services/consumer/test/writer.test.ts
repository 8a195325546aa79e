/** The writer's own array literals, checked against PostgreSQL's parser and node-postgres' encoding. */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { textArrayLiteral } from '../src/writer.js';

let client: pg.Client;
beforeAll(async () => {
  client = new pg.Client({ connectionString: inject('stack').databaseUrl });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
});

describe('textArrayLiteral', () => {
  it('reads back element for element, as node-postgres would encode the array', async () => {
    const values = [
      '{"specversion":"1.0","data":{"q":"a \\"quoted\\" \\\\ path"}}',
      null,
      '',
      'NULL',
      'comma, {brace} "quote" \\backslash\\ tab\tnewline\n',
      'unicode ✓ \u001f sep',
      '  spaces  ',
    ];
    const { rows } = await client.query('SELECT $1::text[] AS mine, $2::text[] AS theirs', [
      textArrayLiteral(values),
      values,
    ]);
    expect(rows[0].mine).toEqual(values);
    expect(rows[0].theirs).toEqual(values);
  });
});
