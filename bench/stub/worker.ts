// B7's baseline: the smallest Worker that uses the same libraries as functions/worker.ts the way
// it uses them — an OpenAPIHono app with a zod-validated route, a @planetscale/database Client
// and a ULID — and nothing of ModelDock. Bundled by `wrangler deploy --dry-run` like the real one.
import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import { Client } from '@planetscale/database';
import { monotonicFactory } from 'ulid';
import { z } from 'zod';

const body = z.object({ name: z.string().min(1), replicas: z.number().int().min(0) }).strict();
const route = createRoute({
  method: 'post',
  path: '/requests',
  request: { body: { content: { 'application/json': { schema: body } } } },
  responses: { 201: { description: 'created', content: { 'application/json': { schema: body.extend({ id: z.string() }) } } } },
});
const newId = monotonicFactory();
const app = new OpenAPIHono<{ Bindings: { DATABASE_URL: string } }>();
app.openapi(route, async (c) => {
  const input = c.req.valid('json');
  const id = newId();
  await new Client({ url: c.env.DATABASE_URL }).execute('INSERT INTO reservation (id, name) VALUES (?, ?)', [id, input.name]);
  return c.json({ ...input, id }, 201);
});
app.doc('/openapi.json', { openapi: '3.0.0', info: { title: 'stub', version: '0' } });

export default { fetch: app.fetch };
