// An @a2a-js/sdk 1.x server of the echo agent (sdk1_echo.mjs) over the A2A 1.0 HTTP+JSON
// (REST) and gRPC bindings, for the "REST and gRPC side by side" benchmarks (bench/RESULTS.md):
// the SDK's express `restHandler` mounted at /a2a/rest (the path a2ad serves it at) and its
// `grpcService` (lf.a2a.v1.A2AService) on an @grpc/grpc-js server, plaintext HTTP/2. One
// DefaultRequestHandler with the SDK's InMemoryTaskStore behind both, as sdk1_server.mjs's
// `--store memory` for JSON-RPC.
//
//   node sdk1_bindings_server.mjs
//
// Both listen on 127.0.0.1, port 0 (free ports). When ready, prints
// "sdk1: grpc 127.0.0.1:GPORT" and then "sdk1: serving http://127.0.0.1:PORT/" on stdout.
import express from 'express';
import { DefaultRequestHandler, InMemoryTaskStore } from 'sdk1/server';
import { UserBuilder, agentCardHandler, restHandler } from 'sdk1/server/express';
import { A2AService, grpcService } from 'sdk1/server/grpc';
import { Server, ServerCredentials } from '@grpc/grpc-js';

import { EchoExecutor, echoCard } from './sdk1_echo.mjs';

const grpcServer = new Server();
const grpcPort = await new Promise((resolve, reject) =>
  grpcServer.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, port) =>
    err ? reject(err) : resolve(port),
  ),
);

const app = express();
const server = app.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  const base = `http://127.0.0.1:${port}`;
  const card = echoCard([
    { url: `${base}/a2a/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: '' },
    { url: `127.0.0.1:${grpcPort}`, protocolBinding: 'GRPC', protocolVersion: '1.0', tenant: '' },
  ]);
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new EchoExecutor());
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  app.use(
    '/a2a/rest',
    restHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }),
  );
  grpcServer.addService(
    A2AService,
    grpcService({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }),
  );
  console.log(`sdk1: grpc 127.0.0.1:${grpcPort}`);
  console.log(`sdk1: serving ${base}/`);
});
process.on('SIGTERM', () => {
  grpcServer.forceShutdown();
  server.close(() => process.exit(0));
});
