// Forms generated from what the server sends: a clarification's questions (each with its
// JSON schema), a workflow's variables (the start form), an approval's actions. The checks
// here are the server's own rules (workflow/answers.cpp, answer_schema.hpp) run early, so an
// operator sees the field at fault before sending; the server checks again and its refusal
// is shown next to the field it names.

export type FieldKind = 'text' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';

export type Field = {
  id: string; // the answer's key
  path: string; // the server's name of the field ("answers.q1", "inputs.prompt")
  label: string;
  kind: FieldKind;
  required: boolean;
  options?: string[];
  description?: string;
  initial?: string | boolean;
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON's type names, as the server says them. */
export function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'boolean';
  return 'object';
}

function kindOfSchema(schema: unknown): { kind: FieldKind; options?: string[] } {
  if (!isObj(schema)) return { kind: 'text' };
  if (Array.isArray(schema.enum) && schema.enum.every((e) => typeof e === 'string'))
    return { kind: 'enum', options: schema.enum as string[] };
  switch (schema.type) {
    case 'string':
      return { kind: 'text' };
    case 'number':
      return { kind: 'number' };
    case 'integer':
      return { kind: 'integer' };
    case 'boolean':
      return { kind: 'boolean' };
    case 'object':
    case 'array':
      return { kind: 'json' };
    default:
      return { kind: schema.type === undefined ? 'text' : 'json' };
  }
}

/** One field per question of a clarification interrupt ({id, question, schema?}). */
export function questionFields(data: unknown): Field[] {
  const questions = isObj(data) && Array.isArray(data.questions) ? data.questions : [];
  return questions.filter(isObj).map((q) => {
    const id = String(q.id);
    const { kind, options } = kindOfSchema(q.schema);
    const schema = isObj(q.schema) ? q.schema : {};
    return {
      id,
      path: `answers.${id}`,
      label: String(q.question ?? id),
      kind,
      options,
      required: true,
      description: typeof schema.description === 'string' ? schema.description : undefined,
    };
  });
}

/** The start form of a workflow: one field per variable ({name, type, required?, ...}). */
export function variableFields(variables: unknown): Field[] {
  const list = Array.isArray(variables) ? variables : [];
  return list.filter(isObj).map((v) => {
    const name = String(v.name);
    const { kind, options } = kindOfSchema({ type: v.type, enum: v.enum });
    const initial =
      v.defaultValue === undefined
        ? undefined
        : kind === 'boolean'
          ? Boolean(v.defaultValue)
          : kind === 'json'
            ? JSON.stringify(v.defaultValue)
            : String(v.defaultValue);
    return {
      id: name,
      path: `inputs.${name}`,
      label: name,
      kind,
      options,
      required: v.required === true,
      description: typeof v.description === 'string' ? v.description : undefined,
      initial,
    };
  });
}

export type Parsed = { ok: true; value: unknown; present: boolean } | { ok: false; error: string };

/** A field's typed value from what the operator entered. */
export function parseField(f: Field, raw: string | boolean | undefined): Parsed {
  if (f.kind === 'boolean') return { ok: true, value: raw === true, present: true };
  const text = typeof raw === 'string' ? raw.trim() : '';
  if (text === '') {
    if (f.required) return { ok: false, error: 'required' };
    return { ok: true, value: undefined, present: false };
  }
  switch (f.kind) {
    case 'number':
    case 'integer': {
      const n = Number(text);
      if (!Number.isFinite(n)) return { ok: false, error: `expected a number, got "${text}"` };
      if (f.kind === 'integer' && !Number.isInteger(n))
        return { ok: false, error: `expected an integer, got ${text}` };
      return { ok: true, value: n, present: true };
    }
    case 'enum':
      if (!f.options?.includes(text))
        return { ok: false, error: `expected one of ${f.options?.join(', ')}` };
      return { ok: true, value: text, present: true };
    case 'json':
      try {
        return { ok: true, value: JSON.parse(text), present: true };
      } catch {
        return { ok: false, error: 'expected JSON' };
      }
    default:
      return { ok: true, value: typeof raw === 'string' ? raw : '', present: true };
  }
}

export type Built = { ok: true; value: Obj } | { ok: false; errors: Record<string, string> };

/** The object of `fields`' values ({id: value}), or the errors by field path. */
export function buildValues(fields: Field[], raw: Record<string, string | boolean>): Built {
  const value: Obj = {};
  const errors: Record<string, string> = {};
  for (const f of fields) {
    const p = parseField(f, raw[f.id]);
    if (!p.ok) errors[f.path] = p.error;
    else if (p.present) value[f.id] = p.value;
  }
  return Object.keys(errors).length ? { ok: false, errors } : { ok: true, value };
}

/**
 * The answer to an approval gate: {action, feedback?, editedArtifactData?}. The edited
 * artifact must be JSON of the type of the artifact under review (data.artifactData; an
 * object when there is none), as the server requires; edit-accept requires it.
 */
export function approvalAnswer(
  action: string,
  feedback: string,
  editedText: string,
  data: unknown,
): Built {
  const answer: Obj = { action };
  if (feedback.trim() !== '') answer.feedback = feedback;
  const errors: Record<string, string> = {};
  const artifact = isObj(data) ? data.artifactData : undefined;
  const want = artifact === undefined ? 'object' : jsonType(artifact);
  if (editedText.trim() !== '') {
    let edited: unknown;
    try {
      edited = JSON.parse(editedText);
    } catch {
      errors.editedArtifactData = `expected JSON (${want === 'object' ? 'an' : 'a'} ${want})`;
    }
    if (!errors.editedArtifactData) {
      if (jsonType(edited) !== want)
        errors.editedArtifactData = `expected ${want === 'object' || want === 'array' ? 'an' : 'a'} ${want} (the type of the artifact under review), got ${jsonType(edited)}`;
      else answer.editedArtifactData = edited;
    }
  } else if (action === 'edit-accept') {
    errors.editedArtifactData = `required for edit-accept (the edited artifact: ${want === 'object' ? 'an' : 'a'} ${want})`;
  }
  if (action === 'refine' && !answer.feedback) errors.feedback = 'required for refine';
  return Object.keys(errors).length ? { ok: false, errors } : { ok: true, value: answer };
}

/** The actions an approval gate offers (its data.actions; accept and reject by default). */
export function approvalActions(data: unknown): string[] {
  if (isObj(data) && Array.isArray(data.actions))
    return data.actions.filter((a): a is string => typeof a === 'string');
  return ['accept', 'reject'];
}
