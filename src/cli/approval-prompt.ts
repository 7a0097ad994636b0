import { createInterface } from 'node:readline/promises';
import type { ApprovalRequest } from '../registry/types.js';
import type { CliIO } from './io.js';
import { printable, printableJson } from '../common/printable.js';

// Approval on the command line: a prompt when both ends are a terminal; otherwise no.

export async function askApproval(io: CliIO, req: ApprovalRequest): Promise<boolean> {
  if (!io.stdin.isTTY || !io.stderr.isTTY) return false;
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  try {
    // What is asked about comes from a chain or a model: a bidi override here would make the call
    // read as something else at the very moment someone decides on it.
    const args = printableJson(req.args);
    const shown = printable(`step '${req.step}' wants to call dangerous tool '${req.tool}' with ${args.length > 200 ? `${args.slice(0, 197)}...` : args}`);
    const answer = await rl.question(`\n${shown}\nallow? [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

