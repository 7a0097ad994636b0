// The API report: every name each public entry of the package exports, with its declaration
// (signatures, interfaces and types whole, comments dropped), read by the TypeScript compiler from
// the declaration files the build writes (dist/*.d.ts: quicker to read than the sources, and what
// users' compilers see). Run after `npm run build`. gen-docs.js writes it to docs/reference/api.md and a test
// compares, so that a change to the public surface is a visible change to that page in review.
import { join } from 'node:path';
import ts from 'typescript';

/** The package's entries: the subpath users import, and its source. */
export const ENTRIES = [
  ['toolchain', 'dist/index.d.ts'],
  ['toolchain/llm', 'dist/entry/llm.d.ts'],
  ['toolchain/mcp', 'dist/entry/mcp.d.ts'],
  ['toolchain/serve', 'dist/entry/serve.d.ts'],
  ['toolchain/store', 'dist/entry/store.d.ts'],
  ['toolchain/testing', 'dist/entry/testing.d.ts'],
  ['toolchain/observe', 'dist/entry/observe.d.ts'],
  ['toolchain/plugin', 'dist/plugin.d.ts'],
];

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });
const f = ts.factory;
const isPrivate = (m) => ts.getCombinedModifierFlags(m) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected) || (m.name && ts.isPrivateIdentifier(m.name));
const bare = (mods) => mods?.filter((m) => m.kind !== ts.SyntaxKind.ExportKeyword && m.kind !== ts.SyntaxKind.DeclareKeyword && m.kind !== ts.SyntaxKind.DefaultKeyword);

/** A declaration as the report shows it: `declare` and `export` dropped, private members left out. */
function shape(node) {
  if (ts.isFunctionDeclaration(node)) return f.updateFunctionDeclaration(node, bare(node.modifiers), undefined, node.name, node.typeParameters, node.parameters, node.type, undefined);
  if (ts.isClassDeclaration(node)) return f.updateClassDeclaration(node, bare(node.modifiers), node.name, node.typeParameters, node.heritageClauses, node.members.filter((m) => !isPrivate(m)));
  if (ts.isInterfaceDeclaration(node)) return f.updateInterfaceDeclaration(node, bare(node.modifiers), node.name, node.typeParameters, node.heritageClauses, node.members);
  if (ts.isTypeAliasDeclaration(node)) return f.updateTypeAliasDeclaration(node, bare(node.modifiers), node.name, node.typeParameters, node.type);
  if (ts.isVariableDeclaration(node)) return f.createVariableStatement(undefined, f.createVariableDeclarationList([node], ts.NodeFlags.Const));
  return node;
}

export function apiReport(repo) {
  const options = { strict: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, noEmit: true, noLib: true, types: [] };
  const host = ts.createCompilerHost(options);
  // Only the package's own declarations are read: the report prints declarations as written, and
  // following imports into other packages' types (Node's, Fastify's, zod's) would take seconds.
  const dist = join(repo, 'dist');
  host.resolveModuleNameLiterals = (literals, containing) =>
    literals.map((literal) => {
      const found = ts.resolveModuleName(literal.text, containing, options, host).resolvedModule;
      return { resolvedModule: found && found.resolvedFileName.startsWith(dist) ? found : undefined };
    });
  const program = ts.createProgram(ENTRIES.map(([, file]) => join(repo, file)), options, host);
  const checker = program.getTypeChecker();
  const sections = [];
  for (const [subpath, file] of ENTRIES) {
    const source = program.getSourceFile(join(repo, file));
    const exported = checker.getExportsOfModule(checker.getSymbolAtLocation(source)).sort((a, b) => (a.name < b.name ? -1 : 1));
    const values = [];
    const types = [];
    for (const symbol of exported) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const texts = (target.declarations ?? []).map((d) => {
        const text = printer.printNode(ts.EmitHint.Unspecified, shape(d), d.getSourceFile());
        return target.name === symbol.name ? text : `// ${symbol.name} is ${target.name}\n${text}`;
      });
      (target.flags & ts.SymbolFlags.Value ? values : types).push(texts.join('\n'));
    }
    sections.push(`## ${subpath}`, '', `${values.length} values, ${types.length} types.`, '', '```ts', ...values, ...types, '```', '');
  }
  return sections;
}
