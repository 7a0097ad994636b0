import { useState } from 'preact/hooks';
import { ApiError, api, formatTime, type TriggerUpdate, type TriggerView } from './api.js';
import { StatusBadge } from './status.js';
import { usePolling } from './use-polling.js';

// When the chains run on their own: each chain's triggers with their kind, schedule or interval,
// time zone, next fire times, last run (linked to its page) and whether they are paused, with
// Pause (and an optional reason) and Resume. #/triggers shows every chain, #/triggers/CHAIN one.
// Polled every 1.5 s while the tab is visible: a pause is the run store's record, made by any
// process on it (the CLI, another server), and a run can start in any of them.

const REFRESH_MS = 1500;

export function TriggersPage({ chain }: { chain?: string | undefined }) {
  const [triggers, setTriggers] = useState<TriggerView[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const [refresh, setRefresh] = useState(0);

  usePolling(
    () => api.triggers(chain),
    (list) => {
      setTriggers(list);
      setError(undefined);
    },
    setError,
    REFRESH_MS,
    [chain, refresh],
  );

  const changed = (updates: TriggerUpdate[], verb: 'Paused' | 'Resumed'): void => {
    const done = updates.filter((u) => u.changed).map((u) => `${u.chain}#${u.id}`);
    const by = updates.find((u) => u.paused !== undefined)?.paused?.by;
    setNotice(done.length === 0 ? `Nothing to do: ${verb === 'Paused' ? 'paused already' : 'not paused'}.` : `${verb} ${done.join(', ')}${verb === 'Paused' && by !== undefined ? ` (by ${by})` : ''}.`);
    setTriggers((list) => list?.map((t) => updates.find((u) => u.chain === t.chain && u.id === t.id) ?? t));
    setRefresh((n) => n + 1);
  };

  const chains = [...new Set((triggers ?? []).map((t) => t.chain))];
  return (
    <section class="triggers">
      <h1 tabIndex={-1}>{chain !== undefined ? <>Triggers of <code>{chain}</code></> : 'Triggers'}</h1>
      <p class="muted">
        Schedules and intervals that start runs on their own (<code>triggers:</code> in a chain file). A paused trigger fires none of its ticks in any process on this run store; resumed, it
        starts from then, without catching up the ticks it had while paused.
        {chain !== undefined && <> <a href="#/triggers">All triggers</a>.</>}
      </p>
      {notice && <p class="notice info" role="status">{notice}</p>}
      {error && <p class="notice error" role="alert">{error}</p>}
      {triggers === undefined ? (
        <p>Loading…</p>
      ) : triggers.length === 0 ? (
        <p class="empty">{chain !== undefined ? <>Chain <code>{chain}</code> declares no triggers (or is not loaded).</> : 'No chain declares triggers.'}</p>
      ) : (
        chains.map((name) => (
          <section class="trigger-chain" data-chain={name} key={name} aria-labelledby={`triggers-${name}`}>
            <h2 id={`triggers-${name}`}>
              {chain === undefined ? <a href={`#/triggers/${encodeURIComponent(name)}`}>{name}</a> : name}
              <a class="button small" href={`#/start/${encodeURIComponent(name)}`}>Start a run</a>
            </h2>
            <table class="runs trigger-table">
              <caption class="sr-only">Triggers of {name}</caption>
              <thead>
                <tr><th scope="col">Trigger</th><th scope="col">When</th><th scope="col">Next runs</th><th scope="col">Last run</th><th scope="col">State</th><th scope="col"><span class="sr-only">Actions</span></th></tr>
              </thead>
              <tbody>
                {triggers.filter((t) => t.chain === name).map((t) => <TriggerRow key={t.id} trigger={t} onChanged={changed} onError={setError} />)}
              </tbody>
            </table>
          </section>
        ))
      )}
    </section>
  );
}

function when(t: TriggerView): string {
  if (t.kind === 'schedule') return `cron ${t.schedule ?? ''}`;
  if (t.kind === 'every') return `every ${interval(t.every_seconds ?? 0)}`;
  return t.kind;
}

function interval(s: number): string {
  if (s % 86_400 === 0) return `${s / 86_400} d`;
  if (s % 3_600 === 0) return `${s / 3_600} h`;
  if (s % 60 === 0) return `${s / 60} min`;
  return `${s} s`;
}

function TriggerRow({ trigger: t, onChanged, onError }: { trigger: TriggerView; onChanged: (u: TriggerUpdate[], verb: 'Paused' | 'Resumed') => void; onError: (m: string) => void }) {
  const key = `${t.chain}#${t.id}`;
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const state = t.paused !== undefined ? 'paused' : t.enabled ? 'active' : 'disabled';
  const act = async (verb: 'Paused' | 'Resumed'): Promise<void> => {
    setBusy(true);
    try {
      onChanged(verb === 'Paused' ? await api.pauseTrigger(key, reason) : await api.resumeTrigger(key), verb);
      setReason('');
    } catch (e) {
      onError(e instanceof ApiError ? `${e.code}: ${e.message}` : (e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const inputId = `reason-${t.chain}-${t.id}`;
  return (
    <tr data-trigger={key} data-state={state}>
      <td>
        <code>{key}</code>
        <div class="muted">{t.kind}</div>
      </td>
      <td>
        <span class="mono">{when(t)}</span>
        {t.kind === 'schedule' && <div class="muted">{t.timezone}</div>}
        <div class="muted">catchup {t.catchup}, overlap {t.overlap}</div>
      </td>
      <td class="next">
        {t.next.length > 0 ? (
          <ol class="next-runs">{t.next.map((at) => <li key={at}><time dateTime={at}>{formatTime(Date.parse(at))}</time></li>)}</ol>
        ) : (
          <span class="muted">{state === 'paused' ? 'none while paused' : 'none (disabled)'}</span>
        )}
      </td>
      <td class="last">
        {t.last !== undefined ? (
          <>
            <a href={`#/runs/${encodeURIComponent(t.last.run_id)}`} class="mono">{t.last.run_id}</a>
            <div><StatusBadge status={t.last.status} /> {t.last.error_code !== undefined && <code>{t.last.error_code}</code>}</div>
          </>
        ) : (
          <span class="muted">never ran</span>
        )}
      </td>
      <td class="state">
        {state === 'paused' ? (
          <span class="paused">
            <span class="badge status-paused">❚❚ paused</span>
            <div>by {t.paused!.by}, {formatTime(Date.parse(t.paused!.at))}</div>
            {t.paused!.reason !== undefined && <div class="reason">{t.paused!.reason}</div>}
          </span>
        ) : state === 'active' ? (
          <span class="badge status-succeeded">▶ active</span>
        ) : (
          <span class="badge status-skipped">– disabled</span>
        )}
      </td>
      <td class="actions">
        {state === 'paused' ? (
          <button type="button" class="resume" disabled={busy} onClick={() => void act('Resumed')}>Resume</button>
        ) : (
          <form class="pause" onSubmit={(e) => (e.preventDefault(), void act('Paused'))}>
            <label class="sr-only" for={inputId}>Reason for pausing {key}</label>
            <input id={inputId} type="text" placeholder="Reason (optional)" maxLength={1000} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
            <button type="submit" class="pause" disabled={busy}>Pause</button>
          </form>
        )}
      </td>
    </tr>
  );
}
