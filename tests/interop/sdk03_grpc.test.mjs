// a2ad's A2A 0.3 gRPC service (a2a.v1.A2AService, on the --grpc-listen server beside 1.0's)
// driven by @a2a-js/sdk 0.3.14's GrpcTransport with @grpc/grpc-js (sdk03_binding_suite.mjs):
// the card's additionalInterfaces GRPC entry is host:port, and the SDK maps a2ad's statuses
// back to its typed errors (NOT_FOUND, FAILED_PRECONDITION on cancel, UNIMPLEMENTED).

import net from 'node:net';
import { loadDep } from './server.mjs';
import { describeSdk03Binding } from './sdk03_binding_suite.mjs';

const { GrpcTransportFactory } = await loadDep('sdk03/client/grpc');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

describeSdk03Binding({
  binding: 'GRPC',
  transportFactory: () => new GrpcTransportFactory(),
  serverArgs: async () => ['--grpc-listen', `127.0.0.1:${await freePort()}`],
  interfaceUrl: (_server, args) => args[args.indexOf('--grpc-listen') + 1],
});
