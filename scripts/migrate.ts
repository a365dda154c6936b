// `npm run migrate`: applies the ledger migrations (ledger/migrate.ts) to DATABASE_URL, taken
// from the environment or from .dev.vars (the Worker's local secrets).
import { createDb } from '../ledger/db.ts';
import { migrate } from '../ledger/migrate.ts';
import { databaseUrlFromEnv } from './database-url.ts';

const r = await migrate(createDb({ url: databaseUrlFromEnv() }));
for (const name of r.alreadyApplied) console.log(`already applied  ${name}`);
for (const name of r.applied) console.log(`applied          ${name}`);
if (r.applied.length === 0) console.log('schema is up to date');
