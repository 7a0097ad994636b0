import { useEffect, useState } from 'preact/hooks';
import { api, type ChainListItem, type JsonSchema } from './api.js';

// Start a run from a form built from the chain's input schema: a text field per string (a list
// for an enum), a number field per number or integer, a checkbox per boolean, JSON for objects
// and arrays. Defaults are filled in; required inputs are marked. The server validates again and
// its INPUT_INVALID message is shown as it is.

interface Field {
  readonly name: string;
  readonly schema: JsonSchema;
  readonly required: boolean;
}

function fieldsOf(schema: JsonSchema): Field[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, s]) => ({ name, schema: s, required: required.has(name) }));
}

function initialValue(f: Field): string | boolean {
  const d = f.schema.default;
  if (f.schema.type === 'boolean') return d === true;
  if (d === undefined) return '';
  return typeof d === 'object' ? JSON.stringify(d) : String(d);
}

function toInput(fields: Field[], values: Record<string, string | boolean>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const f of fields) {
    const v = values[f.name];
    if (f.schema.type === 'boolean') {
      input[f.name] = v === true;
      continue;
    }
    if (v === '' || v === undefined) continue;
    const text = String(v);
    if (f.schema.type === 'integer' || f.schema.type === 'number') input[f.name] = Number(text);
    else if (f.schema.type === 'object' || f.schema.type === 'array') {
      try {
        input[f.name] = JSON.parse(text);
      } catch {
        throw new Error(`${f.name}: not valid JSON`);
      }
    } else input[f.name] = text;
  }
  return input;
}

export function StartPage({ chain }: { chain?: string | undefined }) {
  const [chains, setChains] = useState<ChainListItem[]>([]);
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const selected = chains.find((c) => c.name === chain);
  const fields = selected ? fieldsOf(selected.inputs) : [];

  useEffect(() => {
    api.chains().then(setChains, (e: Error) => setError(e.message));
  }, []);
  useEffect(() => {
    setValues(Object.fromEntries(fields.map((f) => [f.name, initialValue(f)])));
    setError(undefined);
  }, [selected]);

  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    if (!selected) return;
    setBusy(true);
    setError(undefined);
    try {
      const { run_id } = await api.start(selected.name, toInput(fields, values));
      location.hash = `#/runs/${encodeURIComponent(run_id)}`;
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="start">
      <h1 tabIndex={-1}>Start a run</h1>
      <label class="chain-pick">
        Chain{' '}
        <select value={chain ?? ''} onChange={(e) => (location.hash = `#/start/${encodeURIComponent(e.currentTarget.value)}`)}>
          <option value="" disabled>choose a chain</option>
          {chains.map((c) => <option value={c.name}>{c.name}</option>)}
        </select>
      </label>
      {selected && (
        <form onSubmit={submit} class="input-form" aria-describedby="chain-description">
          <p id="chain-description" class="muted">{selected.description ?? `${selected.steps} steps`}</p>
          {fields.length === 0 && <p class="muted">This chain takes no inputs.</p>}
          {fields.map((f) => (
            <InputField key={f.name} field={f} value={values[f.name] ?? ''} onChange={(v) => setValues({ ...values, [f.name]: v })} />
          ))}
          {error && <p class="notice error" role="alert">{error}</p>}
          <button type="submit" disabled={busy}>{busy ? 'Starting…' : 'Start run'}</button>
        </form>
      )}
    </section>
  );
}

function InputField({ field, value, onChange }: { field: Field; value: string | boolean; onChange: (v: string | boolean) => void }) {
  const id = `input-${field.name}`;
  const { schema } = field;
  const hint = [schema.type, schema.minimum !== undefined ? `≥ ${schema.minimum}` : '', schema.maximum !== undefined ? `≤ ${schema.maximum}` : ''].filter(Boolean).join(', ');
  let control;
  if (schema.type === 'boolean') {
    control = <input id={id} name={field.name} type="checkbox" checked={value === true} onChange={(e) => onChange(e.currentTarget.checked)} />;
  } else if (schema.enum) {
    control = (
      <select id={id} name={field.name} value={String(value)} required={field.required} onChange={(e) => onChange(e.currentTarget.value)}>
        {!field.required && <option value="">—</option>}
        {schema.enum.map((v) => <option value={String(v)}>{String(v)}</option>)}
      </select>
    );
  } else if (schema.type === 'object' || schema.type === 'array') {
    control = <textarea id={id} name={field.name} rows={3} required={field.required} value={String(value)} placeholder={schema.type === 'array' ? '[ … ]' : '{ … }'} onInput={(e) => onChange(e.currentTarget.value)} />;
  } else {
    const numeric = schema.type === 'integer' || schema.type === 'number';
    control = (
      <input id={id} name={field.name} type={numeric ? 'number' : 'text'} step={schema.type === 'integer' ? 1 : 'any'} min={schema.minimum} max={schema.maximum} required={field.required} value={String(value)} onInput={(e) => onChange(e.currentTarget.value)} />
    );
  }
  return (
    <div class="field">
      <label for={id}>
        {field.name}
        {field.required && <span class="required" title="required"> *</span>}
        <span class="muted"> {hint}</span>
      </label>
      {control}
      {schema.description && <small class="muted">{schema.description}</small>}
    </div>
  );
}
