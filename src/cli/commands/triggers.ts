import type { Command } from 'commander';
import { systemClock } from '../../common/clock.js';
import { didYouMean, suggestionSuffix } from '../../common/errors.js';
import { printable, printableJson, printableLines } from '../../common/printable.js';
import { chainNotFound, loadChainSet, type ChainPlan, type ChainSet } from '../../compiler/index.js';
import { pauseTriggers, resolveTriggers, resumeTriggers, triggerKey } from '../../triggers/controls.js';
import { triggerViews, type TriggerUpdate, type TriggerView } from '../../triggers/views.js';
import type { RunStore } from '../../store/types.js';
import type { TriggerChange } from '../../store/trigger-control-types.js';
import { EXIT_OK } from '../io.js';
import type { CommandContext } from '../main.js';
import { osUser } from '../os-user.js';
import { showDiagnostic } from '../paths.js';
import { withOpenStore, withStoreOption, type StoreFlag } from '../with-store.js';

// `toolchain triggers [list] [--json]`: every trigger of the project's chains (schedules,
// intervals, events, webhooks), the next three fire times of those that tick, the newest run of
// each in the store and whether it is paused. `toolchain triggers pause CHAIN[#ID]` and `resume
// CHAIN[#ID]`: the pause is a record in the store (--store, as the other store commands), which
// every process firing triggers on it reads at each look. The chains folder is read to check the
// name (a mistyped one is refused before the store is opened); no plugin is loaded and nothing is
// fired here (serve, worker and watch fire triggers). A webhook shows the name of the variable
// holding its secret, never the secret.

interface ListFlags extends StoreFlag {
  readonly json: boolean;
}

export function registerTriggers(program: Command, ctx: CommandContext): void {
  const triggers = program.command('triggers').description("list the chains' triggers (next fire times, last run, paused or not), and pause or resume them");

  withStoreOption(triggers.command('list', { isDefault: true }).description('every trigger: its next fire times, its last run and how it ended, and whether it is paused'))
    .option('--json', 'print them as JSON', false)
    .action((flags: ListFlags) =>
      withOpenStore(ctx, flags, async (store) => {
        const set = await chainsOf(ctx);
        const views = await triggerViews([...set.plans.values()], store, systemClock.now());
        if (flags.json) ctx.io.stdout.write(`${printableJson(views, 2)}\n`);
        else if (views.length === 0) ctx.io.stdout.write('no chain declares triggers\n');
        else for (const v of views) ctx.io.stdout.write(`${describe(v)}\n`);
        return EXIT_OK;
      }),
    );

  withStoreOption(triggers.command('pause').description('pause a trigger (CHAIN#ID) or every trigger of a chain (CHAIN): no process fires its ticks until it is resumed'))
    .argument('<trigger>', 'CHAIN#ID, or CHAIN for all of its triggers')
    .option('--by <name>', 'who pauses it (default: the OS user)')
    .option('--reason <text>', 'why, kept with the pause and shown by toolchain triggers')
    .option('--json', 'print the triggers as they are afterwards, as JSON', false)
    .action(async (target: string, flags: ListFlags & { by?: string; reason?: string }) => {
      const set = await chainsOf(ctx);
      const found = resolveTriggers([...set.plans.values()], target, (name) => unknownChain(set, name));
      await withOpenStore(ctx, flags, async (store) => {
        const by = flags.by ?? osUser();
        const changes = await pauseTriggers(store, found, { by, ...(flags.reason !== undefined ? { reason: flags.reason } : {}) }, systemClock.now());
        return report(ctx, store, found, changes, flags.json, (key, change) =>
          change.changed ? `${key} paused by ${by}: processes firing triggers on this store skip its ticks until it is resumed` : `${key} was paused already, by ${change.control.paused!.by} at ${new Date(change.control.paused!.at).toISOString()}; left as it is`,
        );
      });
    });

  withStoreOption(triggers.command('resume').description('resume a paused trigger (CHAIN#ID) or every paused trigger of a chain (CHAIN): it fires again from now on'))
    .argument('<trigger>', 'CHAIN#ID, or CHAIN for all of its triggers')
    .option('--json', 'print the triggers as they are afterwards, as JSON', false)
    .action(async (target: string, flags: ListFlags) => {
      const set = await chainsOf(ctx);
      const found = resolveTriggers([...set.plans.values()], target, (name) => unknownChain(set, name));
      await withOpenStore(ctx, flags, async (store) => {
        const changes = await resumeTriggers(store, found, systemClock.now());
        return report(ctx, store, found, changes, flags.json, (key, change) =>
          change.changed ? `${key} resumed: it fires from its next tick on (the ticks while it was paused are not caught up)` : `${key} was not paused`,
        );
      });
    });
}

/** The chains folder, its problems said on stderr. */
async function chainsOf(ctx: CommandContext): Promise<ChainSet> {
  const set = await loadChainSet(ctx.globals().chains, undefined);
  for (const d of set.diagnostics.filter((x) => x.severity === 'error')) ctx.io.stderr.write(`${showDiagnostic(ctx.io.cwd, d)}\n`);
  return set;
}

function unknownChain(set: ChainSet, name: string): { code: ReturnType<typeof chainNotFound>['code']; message: string } {
  const { code, message } = chainNotFound(set, name, suggestionSuffix(didYouMean(name, set.plans.keys())));
  return { code, message };
}

async function report(
  ctx: CommandContext,
  store: RunStore,
  found: readonly { plan: ChainPlan; trigger: { id: string } }[],
  changes: readonly TriggerChange[],
  json: boolean,
  line: (key: string, change: TriggerChange) => string,
): Promise<number> {
  if (json) {
    const views = await triggerViews([found[0]!.plan], store, systemClock.now());
    const updates: TriggerUpdate[] = found.map(({ trigger }, i) => ({ ...views.find((v) => v.id === trigger.id)!, changed: changes[i]!.changed }));
    ctx.io.stdout.write(`${printableJson(updates, 2)}\n`);
  } else {
    for (const [i, { plan, trigger }] of found.entries()) ctx.io.stdout.write(`${printable(line(triggerKey(plan.name, trigger), changes[i]!))}\n`);
  }
  return EXIT_OK;
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
  const next = v.paused ? `paused by ${v.paused.by} since ${v.paused.at}${v.paused.reason !== undefined ? `: ${v.paused.reason}` : ''}` : !v.enabled ? 'disabled' : v.kind === 'event' ? 'on each event' : v.kind === 'webhook' ? 'on each delivery (served by serve)' : `next ${v.next.join(', ')}`;
  const last = v.last ? `last ${v.last.run_id} ${v.last.status}${v.last.error_code ? ` (${v.last.error_code})` : ''}` : 'never ran';
  return printableLines(`${v.chain}#${v.id}  ${head}\n  ${next}\n  ${last}`);
}
