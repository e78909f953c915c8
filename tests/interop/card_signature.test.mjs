// The signed agent card (A2A §8.4), checked with code we did not write and with a literal
// reading of the specification: the 1.0 card a real a2ad serves (A2A-Version: 1.0) verifies
// with @a2a-js/sdk 1.3.0's own verifyAgentCardSignature, and with a verifier that follows
// §8.4.1 to the letter (below), against the key the server publishes at the signature's `jku`
// (its JWKS), imported with `jose`; the kid is the key's RFC 7638 thumbprint as jose computes
// it. The 0.3 card (no A2A-Version; no 0.3 SDK verifies) is signed over itself. A card with
// one signed field altered fails, and so does a card stripped of its security requirements
// (issue 29: the SDK's canonicalization used to drop them from the signed bytes). The kid
// stays the same across a restart on the same data directory, and --card-signing-key signs
// with the key given.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadDep, startServer, uncleanExit } from './server.mjs';

const { verifyAgentCardSignature } = await loadDep('sdk1');
const jose = await loadDep('jose');

async function getJson(url, headers = {}) {
  const res = await fetch(url, { headers });
  assert.equal(res.status, 200, `GET ${url}: HTTP ${res.status}`);
  return { body: await res.json(), headers: res.headers };
}

const card03 = (server) => getJson(server.cardUrl).then((r) => r.body);

/** RFC 8785 for the JSON a card holds (strings, booleans, integers): keys sorted by UTF-16
 * code units, JavaScript's number and string serialization. */
function jcs(v) {
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${jcs(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** A2A §8.4.1 read literally, for the members a2ad's cards hold: the card without
 * `signatures`, default-valued fields left out (an empty string, an empty repeated field,
 * false for a plain bool: an extension's `required`; the capabilities' bools are proto3
 * `optional` and stay), message and map-entry values kept even when empty, a Struct
 * (`params`) kept as it is, canonicalized with JCS. */
const OPTIONAL_BOOLS = new Set(['streaming', 'pushNotifications', 'extendedAgentCard']);
function literalPayload(card) {
  const strip = (v) => {
    if (Array.isArray(v)) return v.map(strip);
    if (v && typeof v === 'object') {
      const out = {};
      for (const [k, x] of Object.entries(v)) {
        if (x === '' || (Array.isArray(x) && x.length === 0)) continue;
        if (x === false && !OPTIONAL_BOOLS.has(k)) continue;
        out[k] = k === 'params' ? x : strip(x);
      }
      return out;
    }
    return v;
  };
  const copy = structuredClone(card);
  delete copy.signatures;
  return jcs(card.supportedInterfaces ? strip(copy) : copy);
}

/** Verifies `card` as literalPayload reads it: some entry of its signatures must verify. */
async function literalVerify(card, jwksUrl) {
  const { body: jwks } = await getJson(jwksUrl);
  const payload = jose.base64url.encode(new TextEncoder().encode(literalPayload(card)));
  for (const entry of card.signatures ?? []) {
    const { kid } = jose.decodeProtectedHeader(entry);
    const jwk = jwks.keys.find((k) => k.kid === kid);
    if (!jwk) continue;
    try {
      await jose.flattenedVerify({ payload, protected: entry.protected, signature: entry.signature },
        await jose.importJWK(jwk, 'ES256'));
      return;
    } catch { /* the next entry */ }
  }
  throw new Error('no signature verifies the literal payload');
}
const card10 = (server) => getJson(server.cardUrl, { 'A2A-Version': '1.0' }).then((r) => r.body);

function protectedHeader(card) {
  assert.ok(Array.isArray(card.signatures) && card.signatures.length > 0,
    `the card has no signatures: ${JSON.stringify(card)}`);
  return jose.decodeProtectedHeader(card.signatures[0]);
}

/** The SDK's verifier; the key comes from the JWKS at the signature's jku, found by kid. */
function sdkVerifier(expectedJku) {
  return verifyAgentCardSignature(async (kid, jku) => {
    if (jku !== expectedJku) throw new Error(`jku ${jku}, expected ${expectedJku}`);
    const { body: jwks } = await getJson(jku);
    const jwk = jwks.keys.find((k) => k.kid === kid);
    if (!jwk) throw new Error(`kid ${kid} is not in ${JSON.stringify(jwks)}`);
    return jose.importJWK(jwk, 'ES256');
  });
}

/** Runs `fn` with console.debug silenced (the SDK logs every refused entry there). */
async function quietly(fn) {
  const debug = console.debug;
  console.debug = () => {};
  try {
    return await fn();
  } finally {
    console.debug = debug;
  }
}

describe('the signed agent card', () => {
  let server;
  let jwksUrl;
  before(async () => {
    server = await startServer();
    jwksUrl = `${server.baseUrl}/.well-known/jwks.json`;
  });
  after(async () => {
    const how = uncleanExit(await server.stop());
    assert.equal(how, '', how);
  });

  it('verifies with the SDK and with a literal verifier; the 0.3 card is signed over itself', async () => {
    const strict = await card10(server);
    await sdkVerifier(jwksUrl)(strict);
    await literalVerify(strict, jwksUrl);
    const v03 = await card03(server);
    assert.ok('url' in v03 && !('url' in strict), 'expected the two card forms');
    await literalVerify(v03, jwksUrl);
  });

  it('has the protected header A2A §8.4 asks for, and its kid is the RFC 7638 thumbprint', async () => {
    const header = protectedHeader(await card10(server));
    assert.equal(header.alg, 'ES256');
    assert.equal(header.typ, 'JOSE');
    assert.equal(header.jku, jwksUrl);
    const { body: jwks, headers } = await getJson(jwksUrl);
    assert.match(headers.get('content-type'), /json/);
    assert.match(headers.get('cache-control') ?? '', /max-age=\d+/);
    const jwk = jwks.keys.find((k) => k.kid === header.kid);
    assert.ok(jwk, `kid ${header.kid} is not in the JWKS`);
    assert.deepEqual({ kty: jwk.kty, crv: jwk.crv, use: jwk.use, alg: jwk.alg },
      { kty: 'EC', crv: 'P-256', use: 'sig', alg: 'ES256' });
    assert.equal(await jose.calculateJwkThumbprint(jwk, 'sha256'), header.kid);
    // The JWKS also lists the push keys (another kid).
    assert.ok(jwks.keys.length >= 2, JSON.stringify(jwks));
  });

  it('fails once a signed field is altered', async () => {
    const verify = sdkVerifier(jwksUrl);
    const alterations10 = [
      (c) => { c.name = 'Not a2ad'; },
      (c) => { c.supportedInterfaces[0].url = 'http://evil.example/v1/a2a'; },
      (c) => { c.skills[0].description += '!'; },
      (c) => { c.capabilities.extendedAgentCard = true; },
      (c) => { c.skills.pop(); },
    ];
    const card = await card10(server);
    for (const alter of alterations10) {
      const altered = structuredClone(card);
      alter(altered);
      await quietly(() => assert.rejects(verify(altered), /No valid signatures/,
        `still verifies after ${alter}`));
      await assert.rejects(literalVerify(altered, jwksUrl));
    }
    const unsigned = structuredClone(card);
    delete unsigned.signatures;
    await assert.rejects(verify(unsigned), /No signatures/);
    // The 0.3 card: every member is covered, its url and additionalInterfaces too.
    for (const alter of [(c) => { c.url = 'http://elsewhere.example/v1/a2a'; },
      (c) => { c.additionalInterfaces = []; }, (c) => { c.name = 'Not a2ad'; }]) {
      const altered = await card03(server);
      alter(altered);
      await assert.rejects(literalVerify(altered, jwksUrl));
    }
  });
});

describe('the card of a server with keys', () => {
  it('declares its security requirements, and a card stripped of them verifies nowhere', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'a2ad-card-keys-'));
    try {
      execFileSync(process.env.A2AD_BIN,
        ['keys', 'create', '--data-dir', dataDir, '--tenant', 'acme', '--scopes', 'admin']);
      const server = await startServer({ dataDir });
      try {
        const jwks = `${server.baseUrl}/.well-known/jwks.json`;
        const card = await card10(server);
        assert.equal(card.securityRequirements.length, 6, JSON.stringify(card.securityRequirements));
        assert.equal(card.signatures.length, 1);  // the SDK and §8.4.1 read it alike
        await sdkVerifier(jwks)(card);
        await literalVerify(card, jwks);
        const stripped = structuredClone(card);
        delete stripped.securityRequirements;
        await quietly(() => assert.rejects(sdkVerifier(jwks)(stripped), /No valid signatures/));
        await assert.rejects(literalVerify(stripped, jwks));
        const weaker = structuredClone(card);
        weaker.securityRequirements.pop();
        await quietly(() => assert.rejects(sdkVerifier(jwks)(weaker), /No valid signatures/));
      } finally {
        const how = uncleanExit(await server.stop());
        assert.equal(how, '', how);
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the card signing key', () => {
  it('keeps its kid across a restart on the same data directory', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'a2ad-card-key-'));
    try {
      const kids = [];
      for (let i = 0; i < 2; i++) {
        const server = await startServer({ dataDir });
        try {
          const card = await card10(server);
          await sdkVerifier(`${server.baseUrl}/.well-known/jwks.json`)(card);
          kids.push(protectedHeader(card).kid);
        } finally {
          const how = uncleanExit(await server.stop());
          assert.equal(how, '', how);
        }
      }
      assert.equal(kids[0], kids[1]);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('--card-signing-key signs with the key given', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'a2ad-card-key-'));
    try {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const file = path.join(dir, 'card-key.pem');
      await writeFile(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
      const given = createPublicKey(privateKey).export({ format: 'jwk' });
      const server = await startServer({ args: ['--card-signing-key', file] });
      try {
        const card = await card10(server);
        // Verified with the key we made, not one fetched from the server.
        await verifyAgentCardSignature(async () => jose.importJWK(given, 'ES256'))(card);
        assert.equal(protectedHeader(card).kid, await jose.calculateJwkThumbprint(given, 'sha256'));
        const { body: jwks } = await getJson(`${server.baseUrl}/.well-known/jwks.json`);
        const listed = jwks.keys.find((k) => k.kid === protectedHeader(card).kid);
        assert.deepEqual([listed.x, listed.y], [given.x, given.y]);
      } finally {
        const how = uncleanExit(await server.stop());
        assert.equal(how, '', how);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('--no-card-signing serves a card without signatures', async () => {
    const server = await startServer({ args: ['--no-card-signing'] });
    try {
      assert.equal((await card03(server)).signatures, undefined);
      assert.equal((await card10(server)).signatures, undefined);
    } finally {
      const how = uncleanExit(await server.stop());
      assert.equal(how, '', how);
    }
  });
});
