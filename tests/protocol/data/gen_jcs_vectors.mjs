// Writes jcs_vectors.json (beside this file): RFC 8785 cases for a2ad's JCS
// (tests/protocol/jcs_vectors_test.cpp). The cases restate, one for one, the groups of the
// a2a-jcs-v01 corpus offered to the A2A conformance kit (a2aproject/a2a-tck pull request
// #228, conformance-vectors/a2a-jcs-v01: A2 signatures exclusion, A3 key order, A4 strings,
// A5 numbers, A6 arrays and literals; 47 to accept, 10 to refuse); the kit itself is not
// copied. The expected bytes of an accepted case come from ECMAScript's own JSON (RFC 8785
// defines JCS by it: JSON.parse, members sorted as UTF-16 code units, JSON.stringify for
// every leaf), never from a2ad. Run: node tests/protocol/data/gen_jcs_vectors.mjs
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function canonical(v) {
  if (Array.isArray(v)) return '[' + v.map(canonical).join(',') + ']';
  if (v !== null && typeof v === 'object') {
    return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + canonical(v[k])).join(',') + '}';
  }
  if (typeof v === 'number' && !Number.isFinite(v)) throw new Error('no JSON form');
  if (typeof v === 'string' && !v.isWellFormed()) throw new Error('lone surrogate');
  return JSON.stringify(v);
}

const vectors = [];
const accept = (id, input) => vectors.push({ id, input, expect: 'accept', canonical: canonical(JSON.parse(input)) });
const refuse = (id, input, why) => vectors.push({ id, input, expect: 'refuse', why });
// A2: the card's signing bytes leave `signatures` out (A2A §8.4.1 rule 3). Accepted: what
// remains, canonical. Refused: bytes that claim to be canonical and still carry the field.
const excluding = (id, input) => {
  const card = JSON.parse(input);
  delete card.signatures;
  vectors.push({ id, input, expect: 'accept-card', canonical: canonical(card) });
};
excluding('A2-001', '{"name": "Example Agent", "capabilities": {"streaming": true, "pushNotifications": false}, "signatures": [{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "abc123"}]}');
excluding('A2-002', '{"name": "Example Agent", "capabilities": {"streaming": true, "pushNotifications": false}, "signatures": []}');
refuse('A2-REJECT-003', '{"capabilities":{"pushNotifications":false,"streaming":true},"name":"Example Agent","signatures":[{"protected":"eyJhbGciOiJFUzI1NiJ9","signature":"abc123"}]}', 'signatures in claimed signing bytes');
refuse('A2-REJECT-004', '{"capabilities":{"pushNotifications":false,"streaming":true},"name":"Example Agent","signatures":[]}', 'signatures in claimed signing bytes');
// A3: members sorted by UTF-16 code units.
accept('A3-001', '{"a": 1, "b": 2, "c": 3}');
accept('A3-002', '{"zebra": 1, "apple": 2, "mango": 3}');
accept('A3-003', '{"apple": 1, "Apple": 2}');
accept('A3-004', '{"10": 1, "2": 2, "1": 3}');
accept('A3-005', '{"cafe": 1, "caf\u00e9": 2}');
accept('A3-006', '{"b\ud83d\ude00key": 1, "b\uff01key": 2}');
accept('A3-007', '{"x\ud800\udc00end": 1, "x\ue000end": 2}');
accept('A3-008', '{"caf\u00e9": 1, "cafe\u0301": 2}');
accept('A3-009', '{"": 1, "a": 2}');
accept('A3-010', '{"Zulu": 1, "alpha": 2, "Bravo": 3, "charlie": 4, "Delta": 5, "9key": 6, "echo": 7, "Foxtrot": 8, "1key": 9, "golf": 10, "Hotel": 11}');
refuse('A3-REJECT-011', '{"b\\ud800key": 1, "a": 2}', 'lone high surrogate in a member name');
refuse('A3-REJECT-012', '{"b\\udc00key": 1, "a": 2}', 'lone low surrogate in a member name');
// A4: strings as UTF-8, escaping only what JSON must.
accept('A4-001', '{"name": "Caf\u00e9 Agent", "description": "Planifie des itin\u00e9raires."}');
accept('A4-002', '{"name": "Example Agent"}');
accept('A4-003', '{"note": "hello \ud83d\ude00 world"}');
accept('A4-004', '{"raw": "a \\"quoted\\" \\\\ path\\nwith a newline"}');
accept('A4-005', '{"empty": ""}');
accept('A4-006', '{"ctrl": "a\\u0001b\\u001fc"}');
accept('A4-007', '{"label": "\u4e2d\u6587"}');
accept('A4-008', '{"del": "a\\u007fb"}');
accept('A4-009', '{"combining": "e\u0301clair"}');
accept('A4-010', '{"rtl": "\u0627\u0644\u0633\u0644\u0627\u0645"}');
accept('A4-011', '{"url": "https:\\/\\/example.com/a2a/v1"}');
accept('A4-012', '{"emoji_pair": "\\ud83d\\ude00\\ud83d\\ude01"}');
refuse('A4-REJECT-013', '{"name": "broken \\udc00 value"}', 'lone low surrogate in a string');
refuse('A4-REJECT-014', '{"name": "before\\udc00after"}', 'lone low surrogate mid-string');
refuse('A4-REJECT-015', '{"name": "\\ud800x"}', 'high surrogate followed by a letter');
// A5: numbers as ECMAScript's Number::toString.
accept('A5-001', '{"tolerance": 1e-06}');
accept('A5-002', '{"big": 1e+21}');
accept('A5-003', '{"n": 42}');
accept('A5-004', '{"n": -17}');
accept('A5-005', '{"n": 0}');
accept('A5-006', '{"n": -0.0}');
accept('A5-007', '{"n": 0.1}');
accept('A5-008', '{"n": 3.14159}');
accept('A5-009', '{"n": 9007199254740991}');
accept('A5-010', '{"n": -123.456}');
accept('A5-011', '{"n": 1e-07}');
accept('A5-012', '{"n": 1e+20}');
accept('A5-013', '{"n": 0.30000000000000004}');
accept('A5-014', '{"n": 100}');
accept('A5-015', '{"exp_upper": 1E1, "trailing_zero": 1.0}');
refuse('A5-REJECT-016', '{"n": NaN}', 'NaN');
refuse('A5-REJECT-017', '{"n": Infinity}', 'Infinity');
refuse('A5-REJECT-018', '{"n": -Infinity}', '-Infinity');
// A6: arrays keep their order, objects nest, literals.
accept('A6-001', '{"items": []}');
accept('A6-002', '{"config": {}}');
accept('A6-003', '{"matrix": [[1, 2], [3, 4]]}');
accept('A6-004', '{"a": {"b": {"c": 1}}}');
accept('A6-005', '{"mixed": [1, "two", true, false, null, 3.5]}');
accept('A6-006', '{"value": null}');
accept('A6-007', '{"flag_true": true, "flag_false": false}');
accept('A6-008', '{"deep": [{"x": [1, {"y": 2}]}, {"x": []}]}');

const accepted = vectors.filter((v) => v.expect !== 'refuse').length;
if (accepted !== 47 || vectors.length - accepted !== 10) throw new Error(`counts ${accepted}/${vectors.length}`);
const out = join(dirname(fileURLToPath(import.meta.url)), 'jcs_vectors.json');
writeFileSync(out, JSON.stringify({ generatedBy: 'tests/protocol/data/gen_jcs_vectors.mjs', vectors }, null, 1) + '\n');
console.log(`wrote ${vectors.length} vectors to ${out}`);
