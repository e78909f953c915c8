import { describe, expect, test } from 'vitest';

import {
  approvalActions,
  approvalAnswer,
  buildValues,
  parseField,
  questionFields,
  variableFields,
} from './forms';

describe('clarification questions', () => {
  const data = {
    questions: [
      { id: 'budget', question: 'What is the budget?', schema: { type: 'number' } },
      { id: 'seats', question: 'How many seats?', schema: { type: 'integer' } },
      { id: 'region', question: 'Which region?', schema: { enum: ['eu', 'us'] } },
      { id: 'urgent', question: 'Urgent?', schema: { type: 'boolean' } },
      { id: 'contacts', question: 'Who?', schema: { type: 'array' } },
      { id: 'note', question: 'Anything else?' },
    ],
  };

  test('one field per question, typed by its schema', () => {
    const fields = questionFields(data);
    expect(fields.map((f) => [f.id, f.kind, f.path])).toEqual([
      ['budget', 'number', 'answers.budget'],
      ['seats', 'integer', 'answers.seats'],
      ['region', 'enum', 'answers.region'],
      ['urgent', 'boolean', 'answers.urgent'],
      ['contacts', 'json', 'answers.contacts'],
      ['note', 'text', 'answers.note'],
    ]);
    expect(fields[2].options).toEqual(['eu', 'us']);
    expect(fields[0].label).toBe('What is the budget?');
  });

  test('values are typed, and each error names its field', () => {
    const fields = questionFields(data);
    const ok = buildValues(fields, {
      budget: '1200.5',
      seats: '3',
      region: 'eu',
      urgent: true,
      contacts: '["a@example.com"]',
      note: 'none',
    });
    expect(ok).toEqual({
      ok: true,
      value: { budget: 1200.5, seats: 3, region: 'eu', urgent: true, contacts: ['a@example.com'], note: 'none' },
    });
    const bad = buildValues(fields, { budget: 'lots', seats: '2.5', region: 'mars', contacts: '[', note: '' });
    expect(bad.ok).toBe(false);
    if (!bad.ok)
      expect(Object.keys(bad.errors).sort()).toEqual([
        'answers.budget',
        'answers.contacts',
        'answers.note',
        'answers.region',
        'answers.seats',
      ]);
  });

  test('nothing but an array of questions makes fields', () => {
    expect(questionFields(undefined)).toEqual([]);
    expect(questionFields({ questions: 'what?' })).toEqual([]);
  });
});

describe('start form of a workflow', () => {
  test('variables with their defaults; optional ones left out when empty', () => {
    const fields = variableFields([
      { name: 'prompt', type: 'string', required: true },
      { name: 'delayMs', type: 'number', defaultValue: 3600000 },
    ]);
    expect(fields.map((f) => [f.path, f.kind, f.required, f.initial])).toEqual([
      ['inputs.prompt', 'text', true, undefined],
      ['inputs.delayMs', 'number', false, '3600000'],
    ]);
    expect(buildValues(fields, { prompt: 'Q3 launch', delayMs: '' })).toEqual({
      ok: true,
      value: { prompt: 'Q3 launch' },
    });
    const missing = buildValues(fields, { prompt: ' ' });
    expect(missing).toEqual({ ok: false, errors: { 'inputs.prompt': 'required' } });
  });

  test('a boolean is a value whatever is entered', () => {
    const [f] = variableFields([{ name: 'dry', type: 'boolean' }]);
    expect(parseField(f, undefined)).toEqual({ ok: true, value: false, present: true });
  });
});

describe('approval answers', () => {
  test('the actions the gate offers', () => {
    expect(approvalActions({ actions: ['accept', 'refine', 7] })).toEqual(['accept', 'refine']);
    expect(approvalActions({})).toEqual(['accept', 'reject']);
  });

  test('editedArtifactData must have the type of the artifact under review', () => {
    // No artifactData: an object, as the server requires.
    const bad = approvalAnswer('edit-accept', '', '"just text"', {});
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.errors.editedArtifactData).toMatch(/expected an object.*got string/);
    const arr = approvalAnswer('edit-accept', '', '{"a": 1}', { artifactData: [1, 2] });
    expect(arr.ok).toBe(false);
    if (!arr.ok) expect(arr.errors.editedArtifactData).toMatch(/expected an array/);
    expect(approvalAnswer('edit-accept', 'ok', '{"brief": "B"}', {})).toEqual({
      ok: true,
      value: { action: 'edit-accept', feedback: 'ok', editedArtifactData: { brief: 'B' } },
    });
  });

  test('edit-accept needs the edit; refine needs feedback; not JSON is said so', () => {
    const none = approvalAnswer('edit-accept', '', '', {});
    expect(none.ok === false && none.errors.editedArtifactData).toMatch(/required for edit-accept/);
    const refine = approvalAnswer('refine', '', '', {});
    expect(refine.ok === false && refine.errors.feedback).toBe('required for refine');
    const broken = approvalAnswer('accept', '', '{', {});
    expect(broken.ok === false && broken.errors.editedArtifactData).toMatch(/expected JSON/);
    expect(approvalAnswer('accept', '', '', {})).toEqual({ ok: true, value: { action: 'accept' } });
  });
});
