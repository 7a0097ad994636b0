import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { importModule } from '../../common/import-module.js';

// MCP's stdio framing (one JSON-RPC message per line) with answers for what a client should not
// send, where the SDK's own stdio transport reports to nobody and never replies:
// - a line that is not JSON → -32700 Parse error (id null);
// - a batch (a JSON array; MCP has none since 2025-06) or anything that is not one JSON-RPC
//   message → -32600 Invalid Request (with its id when it has one);
// - a line over MAX_MESSAGE_BYTES → -32600, and the server reads on from the next line;
// and on the way out, a request whose params break the SDK's schema is answered in one sentence
// (-32602 Invalid params) instead of -32603 with a dump of zod's issues.

export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

type Reply = { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string } };
type MessageSchema = { safeParse(v: unknown): { success: boolean; data?: unknown; error?: { issues: readonly Issue[] } } };
interface Issue {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

const reply = (id: string | number | null, code: number, message: string): Reply => ({ jsonrpc: '2.0', id, error: { code, message } });

function idOf(value: unknown): string | number | null {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

/** `params.name: expected string, received number` (and how many more). */
function sentence(issues: readonly Issue[]): string {
  const first = issues[0];
  if (first === undefined) return 'the message does not match the protocol';
  const where = first.path.length > 0 ? `${first.path.map(String).join('.')}: ` : '';
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  return `${where}${first.message.replace(/\s+/g, ' ')}${more}`;
}

/** A -32603 whose message is zod's JSON list of issues, said in one sentence as -32602. */
function plainError(message: JSONRPCMessage): JSONRPCMessage {
  const error = (message as { error?: { code?: unknown; message?: unknown } }).error;
  if (error?.code !== -32603 || typeof error.message !== 'string' || !error.message.trimStart().startsWith('[')) return message;
  let issues: unknown;
  try {
    issues = JSON.parse(error.message);
  } catch {
    return message;
  }
  if (!Array.isArray(issues) || !issues.every((i) => typeof (i as Issue)?.message === 'string' && Array.isArray((i as Issue).path))) return message;
  return { ...message, error: { code: -32602, message: `Invalid params: ${sentence(issues as Issue[])}` } } as JSONRPCMessage;
}

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private chunks: Buffer[] = [];
  private size = 0;
  private oversized = false;
  private schema: MessageSchema | undefined;
  private closed = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly maxBytes = MAX_MESSAGE_BYTES,
  ) {}

  private readonly onData = (chunk: Buffer | string): void => {
    let data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    for (let nl = data.indexOf(10); nl >= 0; nl = data.indexOf(10)) {
      this.take(data.subarray(0, nl));
      this.line();
      data = data.subarray(nl + 1);
    }
    this.take(data);
  };

  private readonly onEnd = (): void => void this.close();

  async start(): Promise<void> {
    ({ JSONRPCMessageSchema: this.schema } = await importModule<{ JSONRPCMessageSchema: MessageSchema }>('@modelcontextprotocol/sdk/types.js'));
    this.input.on('data', this.onData);
    this.input.once('end', this.onEnd);
    this.input.once('close', this.onEnd);
    this.input.on('error', (error: Error) => this.onerror?.(error));
  }

  /** Keeps the bytes of the line being read, or (past the limit) only that it was too long. */
  private take(part: Buffer): void {
    if (this.oversized || part.length === 0) return;
    this.size += part.length;
    if (this.size > this.maxBytes) {
      this.oversized = true;
      this.chunks = [];
      return;
    }
    this.chunks.push(part);
  }

  private line(): void {
    const oversized = this.oversized;
    const text = Buffer.concat(this.chunks).toString('utf8').replace(/\r$/, '');
    this.chunks = [];
    this.size = 0;
    this.oversized = false;
    if (oversized) return void this.answer(reply(null, -32600, `Invalid Request: a message is at most ${this.maxBytes / 1024 / 1024} MiB; this one was longer and was dropped`));
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return void this.answer(reply(null, -32700, `Parse error: ${(error as Error).message}`));
    }
    if (Array.isArray(value)) return void this.answer(reply(null, -32600, 'Invalid Request: batches are not supported; send one JSON-RPC message per line'));
    const parsed = this.schema!.safeParse(value);
    if (!parsed.success) {
      const why = typeof value === 'object' && value !== null ? sentence(parsed.error?.issues ?? []) : 'a message must be a JSON object';
      return void this.answer(reply(idOf(value), -32600, `Invalid Request: ${why}`));
    }
    this.onmessage?.(parsed.data as JSONRPCMessage);
  }

  private answer(message: Reply): Promise<void> {
    return this.send(message as unknown as JSONRPCMessage).catch((error: unknown) => this.onerror?.(error as Error));
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return;
    if (!this.output.write(`${JSON.stringify(plainError(message))}\n`)) await once(this.output, 'drain');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('close', this.onEnd);
    this.onclose?.();
  }
}
