import type { Command } from 'commander';
import { ToolchainError } from '../../common/errors.js';
import { printable } from '../../common/printable.js';
import { deliverEvent } from '../../runs/deliver-event.js';
import { systemClock } from '../../common/clock.js';
import { EXIT_OK } from '../io.js';
import type { CommandContext } from '../main.js';
import { withOpenStore, withStoreOption, type StoreFlag } from '../with-store.js';

// `toolchain emit NAME --data JSON [--id ID]`: sends an event to the runs waiting for it
// (`wait_for`) and to the chains' event triggers. It is kept in the store by id — a second send
// of the same id does nothing — and ends the waits it matches; a process that wakes runs (serve,
// worker, watch, or the `run` that started them) continues those runs. This process has no
// chains to fire: the processes that fire triggers (serve, worker, watch) read the event from
// the store and start the runs of the triggers it meets.

export function registerEmit(program: Command, ctx: CommandContext): void {
  withStoreOption(
    program
      .command('emit')
      .description('send an event to the runs waiting for it (wait_for steps) and to event triggers')
      .argument('<name>', 'the event name, e.g. payment.settled')
      .option('--data <json>', 'the payload, as JSON (default: null)')
      .option('--id <id>', 'the event id: a second event with the same id is not delivered again'),
  ).action((name: string, flags: StoreFlag & { data?: string; id?: string }) =>
    withOpenStore(ctx, flags, async (store) => {
      let payload: unknown = null;
      if (flags.data !== undefined) {
        try {
          payload = JSON.parse(flags.data);
        } catch (error) {
          throw new ToolchainError('USAGE', `--data must be JSON: ${(error as Error).message}`);
        }
      }
      const sent = await deliverEvent(store, systemClock, name, payload, flags.id);
      if (!sent.new) ctx.io.stdout.write(printable(`event ${sent.id} was sent before; nothing delivered`) + '\n');
      else ctx.io.stdout.write(printable(`event ${sent.id}: delivered to ${sent.delivered.length} waiting run${sent.delivered.length === 1 ? '' : 's'}${sent.delivered.length ? ` (${sent.delivered.join(', ')})` : ''}; recorded for the event triggers of the processes on the store`) + '\n');
      return EXIT_OK;
    }),
  );
}
