import type { Command } from 'commander';

// What `toolchain COMMAND --help` shows below the options: examples that work from the quick
// start's folder, and the exit codes every command shares.

const EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  run: [
    "toolchain run city_brief --input question='What time is it in Osaka?'",
    'toolchain run city_brief --input-file input.json --json',
    "toolchain run city_brief --input question=Osaka --mock 'facts={\"population\":1}'",
    'toolchain run my_backup --approve write_file --approve run_command',
    'toolchain run city_brief --input question=Osaka --queue redis://127.0.0.1:6379 --no-wait',
  ],
  resume: ['toolchain runs --status failed', 'toolchain resume 3f2a… --allow-changed', 'toolchain resume 3f2a… --queue redis://127.0.0.1:6379'],
  rerun: ['toolchain rerun 3f2a…', 'toolchain rerun 3f2a… --from render --input template=\'{{ $.city }}\'', 'toolchain rerun 3f2a… --from clock --input hour12=true --allow-changed'],
  worker: ['toolchain worker --queue redis://127.0.0.1:6379 --concurrency 16', 'toolchain worker --queue redis://10.0.0.5:6379 --store postgres://app@10.0.0.6/runs --grace 60s'],
  runs: ['toolchain runs', 'toolchain runs show 3f2a…', 'toolchain runs cancel 3f2a…', 'toolchain runs prune --older-than 30d'],
  validate: ['toolchain validate', 'toolchain validate chains/city_brief.yaml'],
  graph: ['toolchain graph city_brief', 'toolchain graph city_brief --format png -o city_brief.png'],
  list: ['toolchain list chains', 'toolchain list tools --json'],
  tools: ['toolchain tools export --format openai', 'toolchain tools export --format mcp --chains-only'],
  test: ['toolchain test', 'toolchain test chains/city_brief.test.yaml --json'],
  init: ['toolchain init', 'toolchain init --shipped geo,text', 'toolchain init --shipped all --no-starter', 'toolchain --chains my/chains --plugins my/plugins init'],
  watch: ['toolchain watch'],
  serve: ['toolchain serve', 'TOOLCHAIN_TOKEN=$(openssl rand -hex 16) toolchain serve --host 0.0.0.0', 'toolchain serve --queue redis://127.0.0.1:6379'],
  mcp: ['toolchain mcp', 'toolchain mcp --approve write_file', 'toolchain mcp --store sqlite:/home/me/project/.toolchain/runs.db'],
};

const EXIT_CODES = `
Exit codes:
  0    success
  1    a run failed (a step's error, a timeout)
  2    bad usage, bad input, an unknown or invalid chain or tool
  130  cancelled (Ctrl-C)`;

/** Commands whose exit codes say something else than a run's. */
const OWN_EXIT_CODES: Readonly<Record<string, string>> = {
  test: `
Exit codes:
  0    every case passed
  1    a case failed
  2    a test file is invalid (a mock of a step the chain does not have, say), or none was found`,
};

/** Adds examples to each command that has some, and the exit codes to every help page, once. */
export function addHelpTexts(program: Command): void {
  for (const command of program.commands) {
    const examples = EXAMPLES[command.name()];
    if (examples) command.addHelpText('after', `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}`);
    const codes = OWN_EXIT_CODES[command.name()] ?? EXIT_CODES;
    for (const page of [command, ...command.commands]) page.addHelpText('after', codes);
  }
  program.addHelpText('after', EXIT_CODES);
}
