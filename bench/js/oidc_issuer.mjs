// A minimal OpenID Connect issuer for the a2ad-jwt benchmark target: an ES256 key made at
// start, its JWKS at /jwks on 127.0.0.1 (any free port), and one access token for the
// benchmark's requests. Prints two lines, the issuer URL and the token, then serves until
// killed. Node's own crypto and http only.
import { generateKeyPairSync, sign } from 'node:crypto';
import http from 'node:http';

const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const jwks = { keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'bench-1', alg: 'ES256' }] };
const server = http.createServer((req, res) => {
  const found = req.url === '/jwks';
  res.writeHead(found ? 200 : 404, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(found ? jwks : {}));
});
server.listen(0, '127.0.0.1', () => {
  const url = `http://127.0.0.1:${server.address().port}`;
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const input = `${b64({ alg: 'ES256', typ: 'JWT', kid: 'bench-1' })}.${b64({
    iss: url, aud: 'a2ad-bench', sub: 'bench', tenant: 'bench',
    scope: 'tasks:read tasks:write', iat: now, exp: now + 86400,
  })}`;
  const signature = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  process.stdout.write(`${url}\n${input}.${signature.toString('base64url')}\n`);
});
