import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/index.js';
import { executeToolCalls, parseToolCalls, type OpenAITool } from '../../src/entry/llm.js';
import { REPO, runCli } from '../helpers/run-cli.js';

// The end-to-end example of docs/llm/calls-in-text.md, exactly: the shipped tools exported with the real
// CLI, offered to a model that has no native function calling in its server and answers in its
// own text format (Qwen3-Coder XML here), its text parsed with the offered tools, the calls run.

/** What Qwen3-Coder writes, per its chat template (Qwen/Qwen3-Coder-30B-A3B-Instruct chat_template.jinja). */
const MODEL_TEXT = `I will find the city first, then read its clock.
<tool_call>
<function=find_city>
<parameter=text>
What time is it in Osaka?
</parameter>
</function>
</tool_call>
<tool_call>
<function=local_time>
<parameter=timezone>
Asia/Tokyo
</parameter>
<parameter=hour12>
true
</parameter>
</function>
</tool_call>`;

describe('tools export → model → parseToolCalls → executeToolCalls', () => {
  it('runs the calls a text-only model wrote, typed by the exported schemas', async () => {
    const exported = await runCli(['tools', 'export', '--format', 'openai']);
    expect(exported.code).toBe(0);
    const tools = JSON.parse(exported.stdout) as OpenAITool[];

    const { calls, problems } = parseToolCalls(MODEL_TEXT, { tools });
    expect(problems).toEqual([]);
    expect(calls).toEqual([
      { id: 'call_1', name: 'find_city', arguments: { text: 'What time is it in Osaka?' } },
      { id: 'call_2', name: 'local_time', arguments: { timezone: 'Asia/Tokyo', hour12: true } },
    ]);

    const engine = await createEngine({ chainsDir: join(REPO, 'chains'), pluginsDir: join(REPO, 'plugins'), watch: false });
    try {
      const replies = await executeToolCalls(engine, calls);
      expect(replies.map((r) => [r.tool_call_id, r.is_error])).toEqual([
        ['call_1', false],
        ['call_2', false],
      ]);
      expect(JSON.parse(replies[0]!.content)).toMatchObject({ city: 'Osaka', country: 'Japan', timezone: 'Asia/Tokyo' });
      expect(JSON.parse(replies[1]!.content)).toMatchObject({ timezone: 'Asia/Tokyo', time: expect.stringMatching(/^\d{1,2}:\d{2} (AM|PM)$/) });
    } finally {
      await engine.close();
    }
  });
});
