// The version of orchestrate itself, as `orchestrate --version` and the MCP server's handshake
// report it: read from package.json, which src/util/ and dist/util/ both sit two levels below.
import { readFileSync } from 'node:fs';

/** package.json's version, or "0.0.0" when it cannot be read (a bundled copy without it). */
export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}
