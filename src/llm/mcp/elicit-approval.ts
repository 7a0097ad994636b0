import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { importModule } from '../../common/import-module.js';

// Asking the MCP client for an approval, by elicitation (a form the client shows its user): the
// message names what asks (the dangerous tool and its validated arguments, or an approval step's
// prompt), and where (the step and its chain); the form is `{ approve: boolean, comment?: string }`.
// Accepted with `approve: true` is an approval; declined, cancelled or `approve: false` a denial.
// No answer (the client failed, went away, or took longer than the wait allowed) decides
// nothing: the request stays open for a person to decide some other way.

export interface ApprovalQuestion {
  /** The chain whose step asks; '' for a tool called over MCP. */
  readonly chain: string;
  readonly step: string;
  readonly prompt: string;
  readonly tool?: string;
  readonly args?: Record<string, unknown>;
}

export interface ClientAnswer {
  readonly approved: boolean;
  readonly comment?: string;
}

/** How long a client's user has to answer (then the request waits for a decision from elsewhere). */
export const ELICIT_TIMEOUT_MS = 10 * 60_000;

/** Arguments shown in the message, at most. */
const MAX_ARGS_CHARS = 4_000;

/** The client said it can show forms (`elicitation`; an empty object means forms, as in the first revision that had it). */
export function canElicit(server: Server): boolean {
  return server.getClientCapabilities()?.elicitation !== undefined;
}

/** Who decides through this client, as recorded on the request. */
export function clientDecider(server: Server): string {
  const name = server.getClientVersion()?.name;
  return typeof name === 'string' && name !== '' ? `mcp:${name}` : 'mcp';
}

export function approvalMessage(q: ApprovalQuestion): string {
  const where = q.chain === '' ? `called over MCP, step '${q.step}'` : `step '${q.step}' of chain '${q.chain}'`;
  if (q.tool === undefined) return `${q.prompt}\n\n(${where} waits for this approval.)`;
  let args = JSON.stringify(q.args ?? {}, null, 2);
  if (args.length > MAX_ARGS_CHARS) args = `${args.slice(0, MAX_ARGS_CHARS)}…`;
  return `Allow the call to dangerous tool '${q.tool}' (${where})?\n\nArguments:\n${args}`;
}

/** The client's answer, or undefined when it gave none. */
export async function askClient(server: Server, q: ApprovalQuestion, options: { readonly relatedRequestId?: string | number; readonly signal?: AbortSignal; readonly timeoutMs?: number } = {}): Promise<ClientAnswer | undefined> {
  const params = {
    message: approvalMessage(q),
    requestedSchema: {
      type: 'object' as const,
      properties: {
        approve: { type: 'boolean' as const, title: 'Approve', description: 'Allow it (true) or refuse it (false).' },
        comment: { type: 'string' as const, title: 'Comment', description: 'Recorded with the decision.' },
      },
      required: ['approve'],
    },
  };
  const requestOptions = {
    timeout: options.timeoutMs ?? ELICIT_TIMEOUT_MS,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.relatedRequestId !== undefined ? { relatedRequestId: options.relatedRequestId } : {}),
  };
  let result: ElicitResult;
  try {
    const legacy = server.getClientCapabilities()?.elicitation?.form === undefined && server.getClientCapabilities()?.elicitation?.url === undefined;
    // The SDK's elicitInput wants `form` declared; a client of the first revision declared `{}`, which means forms.
    if (legacy) {
      const { ElicitResultSchema } = await importModule<typeof import('@modelcontextprotocol/sdk/types.js')>('@modelcontextprotocol/sdk/types.js');
      result = await server.request({ method: 'elicitation/create', params }, ElicitResultSchema, requestOptions);
    } else {
      result = await server.elicitInput({ mode: 'form', ...params }, requestOptions);
    }
  } catch {
    return undefined;
  }
  if (result.action !== 'accept') return { approved: false, comment: `${result.action === 'decline' ? 'declined' : 'cancelled'} in the MCP client` };
  const content = result.content ?? {};
  const comment = typeof content.comment === 'string' && content.comment !== '' ? { comment: content.comment } : {};
  return { approved: content.approve === true, ...comment };
}
