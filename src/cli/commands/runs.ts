import { existsSync } from 'node:fs';
import { printable, printableJson } from '../../common/printable.js';
import type { Command } from 'commander';
import { ToolchainError } from '../../common/errors.js';
import { loadChainSet } from '../../compiler/index.js';
import { runDetail, runSummary } from '../../runs/stored-result.js';
import type { RunStatus } from '../../store/types.js';
import { cancelRun } from '../../runs/cancel-run.js';
import { describeWait, waitSummary } from '../../runs/run-waits.js';
import { EXIT_OK, EXIT_RUN_FAILED, exitCodeFor } from '../io.js';
import type { CommandContext } from '../main.js';
import { runsTable, runTable } from '../runs-table.js';
import { withOpenStore, withStoreOption, type StoreFlag } from '../with-store.js';

// `toolchain runs`: the runs the store keeps — list, show one, cancel one wherever
// it runs, prune old ones. These read the store alone: no plugin is loaded.

const STATUSES: readonly RunStatus[] = ['running', 'waiting', 'succeeded', 'failed', 'compensation_failed', 'cancelled'];
const UNITS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

export function registerRuns(program: Command, ctx: CommandContext): void {
  const runs = program.command('runs').description('list, show, cancel and prune recorded runs');
  const withStore = withStoreOption;

  withStore(runs.command('list', { isDefault: true }).description('the newest runs first'))
    .option('--status <status>', `only runs with this status: ${STATUSES.join(', ')}`)
    .option('--chain <name>', 'only runs of this chain')
    .option('--limit <n>', 'at most this many runs', '20')
    .option('--json', 'print them as JSON', false)
    .action((flags: StoreFlag & { status?: string; chain?: string; limit: string; json: boolean }) =>
      withOpenStore(ctx, flags, async (store) => {
        if (flags.status !== undefined && !STATUSES.includes(flags.status as RunStatus)) {
          throw new ToolchainError('USAGE', `--status must be one of ${STATUSES.join(', ')}, got '${flags.status}'`);
        }
        const limit = Number(flags.limit);
        if (!Number.isInteger(limit) || limit < 1) throw new ToolchainError('USAGE', `--limit must be a whole number of at least 1, got '${flags.limit}'`);
        const now = Date.now();
        // A run that cannot be read back is named on stderr; the others are still listed.
        const unreadable: ToolchainError[] = [];
        const filter = { limit, onCorrupt: (e: ToolchainError) => void unreadable.push(e), ...(flags.status ? { status: flags.status as RunStatus } : {}), ...(flags.chain ? { chain: flags.chain } : {}) };
        const list = (await store.listRuns(filter)).map((r) => runSummary(r, now));
        ctx.io.stdout.write(flags.json ? `${printableJson(list, 2)}\n` : runsTable(list));
        for (const e of unreadable) ctx.io.stderr.write(`${printable(`error: ${e.code} ${e.message}`)}\n`);
        return unreadable.length ? exitCodeFor(unreadable[0]!.code) : EXIT_OK;
      }),
    );

  withStore(runs.command('show').description('one run: its steps with status, attempts, durations, outputs and errors'))
    .argument('<run-id>', 'the run')
    .option('--json', 'print it as JSON: the result as `run --json` prints it, plus each step\'s input, output, error and attempts', false)
    .action((runId: string, flags: StoreFlag & { json: boolean }) =>
      withOpenStore(ctx, flags, async (store) => {
        const run = await store.getRun(runId);
        if (run === undefined) throw new ToolchainError('RUN_NOT_FOUND', `no run ${runId} in the run store ${store.url}`);
        const chains = ctx.globals().chains;
        const plan = existsSync(chains) ? (await loadChainSet(chains)).plans.get(run.chain) : undefined;
        const reruns = (await store.listRuns({ rerun_of: runId, limit: 100 })).map((r) => r.id);
        const detail = runDetail(run, await store.getSteps(runId), plan, Date.now(), reruns);
        // A waiting run says what it waits for, and until when.
        const waits = run.status === 'waiting' ? await store.waits.listWaits({ run_id: runId, open: true }) : [];
        const wakeAt = run.status === 'waiting' ? await store.waits.wakeAt(runId) : undefined;
        if (flags.json) ctx.io.stdout.write(`${printableJson(run.status === 'waiting' ? { ...detail, waiting_for: waits.map(waitSummary), wake_at: wakeAt ?? null } : detail, 2)}\n`);
        else {
          ctx.io.stdout.write(runTable(detail));
          for (const w of waits) ctx.io.stdout.write(`${printable(`waits for ${describeWait(w)} at step ${w.key}${w.kind === 'approval' ? `: decide with 'toolchain approvals approve ${w.id}' (or deny)` : w.kind === 'event' ? `: send it with 'toolchain emit ${w.name}'` : ''}`)}\n`);
        }
        return EXIT_OK;
      }),
    );

  withStore(runs.command('cancel').description('stop a run, in whichever process runs it'))
    .argument('<run-id>', 'the run')
    .action((runId: string, flags: StoreFlag) =>
      withOpenStore(ctx, flags, async (store) => {
        const run = await cancelRun(store, runId, Date.now());
        if (run === undefined) throw new ToolchainError('RUN_NOT_FOUND', `no run ${runId} in the run store ${store.url}`);
        if (run.status === 'waiting') {
          ctx.io.stdout.write(`run ${runId} was waiting; it is cancelled\n`);
          return EXIT_OK;
        }
        if (run.status !== 'running') {
          ctx.io.stderr.write(`run ${runId} is not running (it ${run.status})\n`);
          return EXIT_RUN_FAILED;
        }
        ctx.io.stdout.write(`cancel requested for run ${runId}; its owner stops it within a second\n`);
        return EXIT_OK;
      }),
    );

  withStore(runs.command('prune').description('delete finished runs older than a duration'))
    .requiredOption('--older-than <duration>', 'e.g. 30d, 12h, 90m (units s, m, h, d, w)')
    .action((flags: StoreFlag & { olderThan: string }) =>
      withOpenStore(ctx, flags, async (store) => {
        const m = /^(\d+(?:\.\d+)?)([smhdw])$/.exec(flags.olderThan.trim());
        if (!m) throw new ToolchainError('USAGE', `--older-than takes a number and a unit (s, m, h, d, w), e.g. 30d; got '${flags.olderThan}'`);
        const gone = await store.prune(Date.now() - Number(m[1]) * UNITS[m[2]!]!);
        ctx.io.stdout.write(`pruned ${gone} run${gone === 1 ? '' : 's'}\n`);
        return EXIT_OK;
      }),
    );
}


