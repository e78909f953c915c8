// The form that answers a run's open gate, generated from its interrupt: an approval's
// actions as buttons with feedback and the edited artifact (JSON, of the artifact's type); a
// clarification's questions as one field each, typed by its schema. A check that fails, here
// or in the server, is shown next to the field it names.
import { useState } from 'preact/hooks';

import { api, ApiError } from '../api';
import { approvalActions, approvalAnswer, buildValues, questionFields, type Field } from '../forms';

type Interrupt = { nodeId: string; kind: string; data?: Record<string, unknown> };

function FieldInput({
  field,
  value,
  error,
  onChange,
}: {
  field: Field;
  value: string | boolean | undefined;
  error?: string;
  onChange: (v: string | boolean) => void;
}) {
  const id = `f-${field.path.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  const described = error ? `${id}-error` : undefined;
  let input;
  if (field.kind === 'boolean')
    input = (
      <input id={id} type="checkbox" checked={value === true} onChange={(e) => onChange((e.target as HTMLInputElement).checked)} />
    );
  else if (field.kind === 'enum')
    input = (
      <select id={id} value={String(value ?? '')} aria-invalid={!!error} aria-describedby={described} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        <option value="">choose…</option>
        {field.options!.map((o) => (
          <option value={o}>{o}</option>
        ))}
      </select>
    );
  else if (field.kind === 'json')
    input = (
      <textarea id={id} rows={3} value={String(value ?? '')} aria-invalid={!!error} aria-describedby={described} onInput={(e) => onChange((e.target as HTMLTextAreaElement).value)} />
    );
  else if (field.kind === 'text')
    input = (
      <input
        id={id}
        type="text"
        value={String(value ?? '')}
        aria-invalid={!!error}
        aria-describedby={described}
        onInput={(e) => onChange((e.target as HTMLInputElement).value)}
      />
    );
  else
    input = (
      <input
        id={id}
        type="number"
        step={field.kind === 'integer' ? '1' : 'any'}
        value={String(value ?? '')}
        aria-invalid={!!error}
        aria-describedby={described}
        onInput={(e) => onChange((e.target as HTMLInputElement).value)}
      />
    );
  return (
    <div class="field">
      <label for={id}>
        {field.label}
        {field.required && field.kind !== 'boolean' ? ' (required)' : ''}
        {field.kind === 'json' ? ' (JSON)' : ''}
      </label>
      {input}
      {field.description && <small>{field.description}</small>}
      {error && (
        <p id={`${id}-error`} role="alert" class="error">
          {error}
        </p>
      )}
    </div>
  );
}

export { FieldInput };

export function AnswerForm({ runId, interrupt, onAnswered }: { runId: string; interrupt: Interrupt; onAnswered: () => void }) {
  const [feedback, setFeedback] = useState('');
  const [edited, setEdited] = useState('');
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [general, setGeneral] = useState('');
  const [busy, setBusy] = useState(false);
  const data = interrupt.data ?? {};
  const questions = interrupt.kind === 'clarification' ? questionFields(data) : [];

  const send = async (resumeValue: unknown) => {
    setBusy(true);
    try {
      await api(`/v1/runs/${encodeURIComponent(runId)}/interrupts/${encodeURIComponent(interrupt.nodeId)}`, {
        method: 'POST',
        body: { resumeValue },
      });
      setErrors({});
      setGeneral('');
      onAnswered();
    } catch (e) {
      if (e instanceof ApiError && e.field) setErrors({ [e.field]: e.message });
      else setGeneral(e instanceof ApiError ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };

  const approve = (action: string) => {
    const built = approvalAnswer(action, feedback, edited, data);
    if (!built.ok) {
      setErrors(built.errors);
      return;
    }
    void send(built.value);
  };

  const title = String(data.title ?? data.question ?? `${interrupt.kind} at ${interrupt.nodeId}`);
  const fieldError = (name: string) =>
    errors[name] ??
    Object.entries(errors).find(([k]) => k.startsWith(`${name}.`) || k.startsWith(`${name}[`))?.[1];
  return (
    <form
      aria-label="Answer"
      class="answer"
      onSubmit={(e) => {
        e.preventDefault();
        if (interrupt.kind !== 'clarification') return;
        const built = buildValues(questions, values);
        if (!built.ok) setErrors(built.errors);
        else void send({ answers: built.value });
      }}
    >
      <h2>{title}</h2>
      {typeof data.description === 'string' && <p>{data.description}</p>}
      {interrupt.kind === 'clarification' ? (
        <>
          {questions.map((f) => (
            <FieldInput field={f} value={values[f.id]} error={fieldError(f.path)} onChange={(v) => setValues({ ...values, [f.id]: v })} />
          ))}
          <button type="submit" disabled={busy}>
            Answer
          </button>
        </>
      ) : (
        <>
          <div class="field">
            <label for="answer-feedback">Feedback</label>
            <textarea id="answer-feedback" rows={2} value={feedback} aria-invalid={!!errors.feedback} aria-describedby={errors.feedback ? 'answer-feedback-error' : undefined} onInput={(e) => setFeedback((e.target as HTMLTextAreaElement).value)} />
            {errors.feedback && (
              <p id="answer-feedback-error" role="alert" class="error">
                {errors.feedback}
              </p>
            )}
          </div>
          <div class="field">
            <label for="answer-edited">editedArtifactData (JSON, for edit-accept)</label>
            <textarea
              id="answer-edited"
              rows={4}
              value={edited}
              aria-invalid={!!fieldError('editedArtifactData')}
              aria-describedby={fieldError('editedArtifactData') ? 'answer-edited-error' : undefined}
              onInput={(e) => setEdited((e.target as HTMLTextAreaElement).value)}
            />
            {fieldError('editedArtifactData') && (
              <p id="answer-edited-error" role="alert" class="error">
                editedArtifactData: {fieldError('editedArtifactData')}
              </p>
            )}
          </div>
          <div class="buttons">
            {approvalActions(data).map((a) => (
              <button type="button" disabled={busy} onClick={() => approve(a)}>
                {a}
              </button>
            ))}
          </div>
        </>
      )}
      {general && (
        <p role="alert" class="error">
          {general}
        </p>
      )}
    </form>
  );
}
