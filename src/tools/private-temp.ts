// A private temp folder (mode 700) for one session's or one task's files: the full-output logs of
// bash and the sandbox's $TMPDIR. Created on first use, removed when its owner ends, and, as a
// last resort, when the process (or worker thread) exits, so nothing is left behind in /tmp.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const live = new Set<string>();
let exitHook = false;

function removeAllOnExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => {
    for (const dir of live) rmSync(dir, { recursive: true, force: true });
  });
}

export class PrivateTempDir {
  private dir: string | undefined;

  constructor(
    private readonly parent: string = tmpdir(),
    private readonly prefix = 'orchestrate-',
  ) {}

  /** The folder; made (mode 700) on the first call. */
  get path(): string {
    if (!this.dir) {
      this.dir = mkdtempSync(join(this.parent, this.prefix));
      live.add(this.dir);
      removeAllOnExit();
    }
    return this.dir;
  }

  /** Whether the folder was made (and not removed yet). */
  get created(): boolean {
    return this.dir !== undefined;
  }

  /** Removes the folder and everything in it. */
  remove(): void {
    const dir = this.dir;
    if (!dir) return;
    this.dir = undefined;
    live.delete(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}
