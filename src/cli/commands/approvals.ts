import type { Command } from 'commander';
import { printable, printableJson } from '../../common/printable.js';
import { decideApproval, pendingApprovals, type ApprovalView } from '../../runs/approvals.js';
import { systemClock } from '../../common/clock.js';
import { EXIT_OK } from '../io.js';
import type { CommandContext } from '../main.js';
import { osUser } from '../os-user.js';
import { withOpenStore, withStoreOption, type StoreFlag } from '../with-store.js';

// `toolchain approvals [list] [--json]`, `toolchain approvals approve|deny ID [--comment TEXT]`:
// the approval requests runs wait for (`approval` steps, dangerous tool calls with no standing
// approval), and their decisions. The decider's name is recorded: --by, else the OS user.

export function registerApprovals(program: Command, ctx: CommandContext): void {
  const approvals = program.command('approvals').description('list the approval requests runs wait for, and approve or deny them');

  withStoreOption(approvals.command('list', { isDefault: true }).description('the pending requests, oldest first'))
    .option('--json', 'print them as JSON', false)
    .action((flags: StoreFlag & { json: boolean }) =>
      withOpenStore(ctx, flags, async (store) => {
        const pending = await pendingApprovals(store);
        if (flags.json) ctx.io.stdout.write(`${printableJson(pending, 2)}\n`);
        else if (pending.length === 0) ctx.io.stdout.write('no approval requests are pending\n');
        else for (const a of pending) ctx.io.stdout.write(`${describe(a)}\n`);
        return EXIT_OK;
      }),
    );

  for (const [verb, approved] of [['approve', true], ['deny', false]] as const) {
    withStoreOption(approvals.command(verb).description(`${verb} a request: its run goes on`))
      .argument('<id>', 'the request (ap_…)')
      .option('--comment <text>', 'why, recorded with the decision')
      .option('--by <name>', 'who decides (default: the OS user)')
      .action((id: string, flags: StoreFlag & { comment?: string; by?: string }) =>
        withOpenStore(ctx, flags, async (store) => {
          const by = flags.by ?? osUser();
          const decided = await decideApproval(store, systemClock, id, { approved, by, ...(flags.comment !== undefined ? { comment: flags.comment } : {}) });
          ctx.io.stdout.write(printable(`${id} ${approved ? 'approved' : 'denied'} by ${by}; run ${decided.run_id} goes on when a process that wakes runs sees it (serve, worker, watch, or the run that waits)`) + '\n');
          return EXIT_OK;
        }),
      );
  }
}

function describe(a: ApprovalView): string {
  const what = a.tool !== undefined ? `tool ${a.tool} ${printableJson(a.args ?? {})}` : a.prompt;
  const until = a.until !== undefined ? ` (denied at ${new Date(a.until).toISOString()} if undecided)` : '';
  return printable(`${a.id}  run ${a.run_id} (${a.chain}) step ${a.step}: ${what.length > 300 ? `${what.slice(0, 297)}...` : what}${until}`);
}
