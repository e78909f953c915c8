// An @a2a-js/sdk 1.x JSON-RPC server with the behaviour of a2ad's `echo` skill, for the side-by-
// side benchmarks (bench/RESULTS.md). Every message creates a task that goes submitted ->
// working -> (artifact echoing the message's parts) -> completed; a blocking SendMessage
// returns the completed task. The SDK's DefaultRequestHandler saves the task to its TaskStore
// on every one of those events.
//
//   node sdk1_server.mjs [--store memory|sqlite|sqlite-defaults|postgres] [--db FILE] [--url URL]
//
// --store memory: the SDK's InMemoryTaskStore. --store sqlite: the SDK's own SQL task store
// (DatabaseTaskStore from @a2a-js/sdk/server/database, on Kysely + better-sqlite3), with the
// table created by the SDK's `a2a-db upgrade` CLI and the same SQLite settings a2ad uses
// (WAL, synchronous=NORMAL). --store sqlite-defaults: the same store on better-sqlite3's
// defaults (rollback journal, synchronous=FULL: every save is fsynced), i.e. the SDK's SQL
// store as it comes, which is what the "6.6 ms per task round trip" measured.
// --store postgres --url postgresql://...: the same DatabaseTaskStore on PostgreSQL (Kysely's
// PostgresDialect over a `pg` Pool of 10 connections, the SDK's table made by `a2a-db upgrade`).
//
// Listens on 127.0.0.1, port 0 (a free port). When ready, prints
// "sdk1: serving http://127.0.0.1:PORT/" on stdout.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import express from 'express';
import { DefaultRequestHandler, InMemoryTaskStore } from 'sdk1/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from 'sdk1/server/express';

import { EchoExecutor, echoCard } from './sdk1_echo.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: args } = parseArgs({
  options: {
    store: { type: 'string', default: 'memory' },
    db: { type: 'string' },
    url: { type: 'string' },
  },
});

async function makeStore() {
  if (args.store === 'memory') return new InMemoryTaskStore();
  if (args.store === 'postgres') {
    if (!args.url) throw new Error('--store postgres needs --url postgresql://...');
    const cli = path.join(here, 'node_modules', 'sdk1', 'dist', 'cli', 'a2a_db.js');
    execFileSync(process.execPath, [cli, 'upgrade', '--url', args.url], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const { default: pg } = await import('pg');
    const { Kysely, PostgresDialect } = await import('kysely');
    const { DatabaseTaskStore } = await import('sdk1/server/database');
    const pool = new pg.Pool({ connectionString: args.url, max: 10 });
    return new DatabaseTaskStore(new Kysely({ dialect: new PostgresDialect({ pool }) }));
  }
  if (args.store !== 'sqlite' && args.store !== 'sqlite-defaults')
    throw new Error(`--store ${args.store}: expected memory|sqlite|sqlite-defaults|postgres`);
  if (!args.db) throw new Error('--store sqlite needs --db FILE');
  // The SDK's migration CLI creates the tasks table (and its indexes) exactly as the SDK
  // expects it.
  const cli = path.join(here, 'node_modules', 'sdk1', 'dist', 'cli', 'a2a_db.js');
  execFileSync(process.execPath, [cli, 'upgrade', '--url', `sqlite:${args.db}`], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const require = createRequire(import.meta.url);
  const Database = require('better-sqlite3');
  const { Kysely, SqliteDialect } = await import('kysely');
  const { DatabaseTaskStore } = await import('sdk1/server/database');
  const sqlite = new Database(args.db);
  if (args.store === 'sqlite') {
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
  }
  const db = new Kysely({ dialect: new SqliteDialect({ database: sqlite }) });
  return new DatabaseTaskStore(db);
}

const store = await makeStore();
const app = express();
const server = app.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const base = `http://127.0.0.1:${port}`;
  const card = echoCard([
    { url: `${base}/v1/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
  ]);
  const handler = new DefaultRequestHandler(card, store, new EchoExecutor());
  app.use(
    '/.well-known/agent-card.json',
    agentCardHandler({ agentCardProvider: handler }),
  );
  app.use('/v1/a2a', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  console.log(`sdk1: serving ${base}/`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
