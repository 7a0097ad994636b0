import type { Command } from 'commander';
import { systemClock } from '../../common/clock.js';
import { printableJson, printableLines } from '../../common/printable.js';
import { loadChainSet } from '../../compiler/index.js';
import { triggerViews, type TriggerView } from '../../triggers/views.js';
import { EXIT_OK } from '../io.js';
import type { CommandContext } from '../main.js';
import { showDiagnostic } from '../paths.js';
import { withOpenStore, withStoreOption, type StoreFlag } from '../with-store.js';

// `toolchain triggers [--json]`: every trigger of the project's chains (schedules, intervals,
// events, webhooks), the next three fire times of those that tick and the newest run of each in
// the store (--store, as the other store commands). It reads the chains folder and the store; it
// loads no plugin and fires nothing (serve, worker and watch do). A webhook shows the name of the
// variable holding its secret, never the secret.

export function registerTriggers(program: Command, ctx: CommandContext): void {
  withStoreOption(program.command('triggers').description("list the chains' triggers: next fire times, last run and how it ended"))
    .option('--json', 'print them as JSON', false)
    .action((flags: StoreFlag & { json: boolean }) =>
      withOpenStore(ctx, flags, async (store) => {
        const set = await loadChainSet(ctx.globals().chains, undefined);
        for (const d of set.diagnostics.filter((x) => x.severity === 'error')) ctx.io.stderr.write(`${showDiagnostic(ctx.io.cwd, d)}\n`);
        const views = await triggerViews([...set.plans.values()], store, systemClock.now());
        if (flags.json) ctx.io.stdout.write(`${printableJson(views, 2)}\n`);
        else if (views.length === 0) ctx.io.stdout.write('no chain declares triggers\n');
        else for (const v of views) ctx.io.stdout.write(`${describe(v)}\n`);
        return EXIT_OK;
      }),
    );
}

function describe(v: TriggerView): string {
  const settings = `catchup ${v.catchup}, overlap ${v.overlap}`;
  const head =
    v.kind === 'schedule'
      ? `schedule '${v.schedule}' ${v.timezone}  ${settings}`
      : v.kind === 'every'
        ? `every ${v.every_seconds}s  ${settings}`
        : v.kind === 'event'
          ? `event '${v.event}'${v.match !== undefined ? ` match ${JSON.stringify(v.match)}` : ''}  ${settings}`
          : `webhook POST ${v.path} (${v.signature}, secret in ${v.secret_env})`;
  const next = !v.enabled ? 'disabled' : v.kind === 'event' ? 'on each event' : v.kind === 'webhook' ? 'on each delivery (served by serve)' : `next ${v.next.join(', ')}`;
  const last = v.last ? `last ${v.last.run_id} ${v.last.status}${v.last.error_code ? ` (${v.last.error_code})` : ''}` : 'never ran';
  return printableLines(`${v.chain}#${v.id}  ${head}\n  ${next}\n  ${last}`);
}
