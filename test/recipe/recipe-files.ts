// Writes recipe folders into temp dirs for tests: real files, real paths.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface TempRecipe {
  dir: string;
  file: string;
  cleanup: () => void;
}

/** A temp folder holding recipe.yaml plus any other files given as relative path -> content. */
export function tempRecipe(yaml: string, files: Record<string, string> = {}): TempRecipe {
  const dir = mkdtempSync(join(tmpdir(), 'orchestrate-recipe-'));
  const write = (rel: string, content: string) => {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), content);
  };
  write('recipe.yaml', yaml);
  for (const [rel, content] of Object.entries(files)) write(rel, content);
  return { dir, file: join(dir, 'recipe.yaml'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
