/**
 * API description and documentation routes: `/openapi.json`, `/openapi.yaml` (the same document
 * rendered as YAML) and `/docs`, a Swagger UI page whose assets come from the `swagger-ui-dist`
 * npm package, served by this service (works offline; no CDN).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Env } from 'hono';
import { stringify } from 'yaml';

const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Event ingestion API</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/init.js"></script>
</body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise fetch a badge from validator.swagger.io and send it
// the document's URL; the page must work offline and talk to nobody else.
const INIT_JS = `window.ui = SwaggerUIBundle({ url: 'openapi.json', dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null });\n`;

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};

/** Adds the description and documentation routes; the document is built once from `app`'s routes. */
export function addDocsRoutes<E extends Env>(
  app: OpenAPIHono<E>,
  info: { title: string; version: string },
): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
  });
  let doc: object | undefined;
  const document = () => {
    doc ??= app.getOpenAPIDocument({
      openapi: '3.0.3',
      info: { ...info, description: 'CloudEvents over HTTP into the event topic.' },
    });
    return doc;
  };
  app.get('/openapi.json', (c) => c.json(document()));
  app.get('/openapi.yaml', (c) =>
    c.body(stringify(document()), 200, { 'content-type': 'application/yaml; charset=utf-8' }),
  );
  const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const cache = new Map<string, Buffer>();
  app.get('/docs', (c) => c.html(DOCS_HTML));
  app.get('/docs/init.js', (c) => c.body(INIT_JS, 200, { 'content-type': 'text/javascript; charset=utf-8' }));
  app.get('/docs/:asset', (c) => {
    const name = c.req.param('asset');
    const type = ASSETS[name];
    if (!type) return c.notFound();
    let bytes = cache.get(name);
    if (!bytes) {
      bytes = readFileSync(join(dist, name));
      cache.set(name, bytes);
    }
    return c.body(new Uint8Array(bytes), 200, {
      'content-type': type,
      'cache-control': 'public, max-age=86400',
    });
  });
}
