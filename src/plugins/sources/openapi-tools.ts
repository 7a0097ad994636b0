import type { Diagnostic, ErrorCode, Severity } from '../../common/errors.js';
import type { ToolchainPluginManifest } from '../manifest.generated.js';
import type { SourceTool } from './source-tools.js';

// OpenAPI documents as sources come next; until then such a plugin is refused at its source.

export type Place = (pointer: string, code: ErrorCode, message: string, severity?: Severity) => Diagnostic;

export async function loadOpenApiTools(
  _manifest: ToolchainPluginManifest,
  _realDir: string,
  _env: Readonly<Record<string, string | undefined>>,
  place: Place,
): Promise<{ ok: true; tools: SourceTool[]; warnings: Diagnostic[] } | { ok: false; diagnostics: Diagnostic[] }> {
  return { ok: false, diagnostics: [place('/source/openapi', 'PLUGIN_INVALID', 'OpenAPI sources are not read yet')] };
}
