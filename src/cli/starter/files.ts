// What `toolchain init` writes: a plugin with one TypeScript tool, and a chain that uses it. Kept
// as data so that a test can check that the starter stays valid as the formats evolve.

export interface StarterFile {
  readonly path: string;
  readonly text: string;
}

const manifest = `# yaml-language-server: $schema=../../schemas/plugin.schema.json
# A starter plugin: edit tools/greet.ts or add tools here; a running \`toolchain watch\` picks
# up every change without a restart.
name: hello
version: 0.1.0
description: A starter plugin with one tool.
tools:
  - name: greet
    description: Greet someone by name, in one of a few languages.
    handler: tools/greet.ts
    timeout: 2s
    parameters:
      type: object
      additionalProperties: false
      required: [name]
      properties:
        name:
          type: string
          description: Who to greet.
        language:
          type: string
          enum: [en, fr, ja]
          default: en
          description: The language of the greeting.
    returns:
      type: object
      required: [text]
      properties:
        text: { type: string }
`;

const handler = `// A tool is an async function of (args, ctx). args are already validated against the
// manifest's parameters, with defaults filled in. ctx has signal, attempt, run_id, step, log and env.

interface Args {
  name: string;
  language: 'en' | 'fr' | 'ja';
}

interface Context {
  log(message: string, fields?: Record<string, unknown>): void;
}

const GREETINGS: Record<Args['language'], string> = { en: 'Hello', fr: 'Bonjour', ja: 'こんにちは' };

export default async function greet(args: Args, ctx: Context): Promise<{ text: string }> {
  ctx.log('greeting', { name: args.name });
  return { text: \`\${GREETINGS[args.language]}, \${args.name}!\` };
}
`;

const chain = `# yaml-language-server: $schema=../schemas/chain.schema.json
# A starter chain: greets someone twice, in two languages at once, then joins the greetings.
#   toolchain run hello --input name=Ada
name: hello
description: Greet someone in English and in French, side by side.
inputs:
  name: string
steps:
  - name: english
    tool: greet
    input_map: { name: $.name, language: en }
  - name: french
    tool: greet
    parallel: true
    input_map: { name: $.name, language: fr }
outputs:
  text: "{{ $.english.text }} / {{ $.french.text }}"
`;

export const STARTER_FILES: readonly StarterFile[] = [
  { path: 'plugins/hello/plugin.yaml', text: manifest },
  { path: 'plugins/hello/tools/greet.ts', text: handler },
  { path: 'chains/hello.yaml', text: chain },
];
