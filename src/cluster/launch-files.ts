// The files a distributed launch keeps on the coordinator's disk: the session bytes its worker
// streams back and the last workspace checkpoint beside them. Written off the coordinator's event
// loop (a synchronous open, write or fsync on a busy disk held the loop of a 250-agent run for
// seconds, issue 41), yet in the order the messages came: one chain of writes per launch, so a
// checkpoint is on disk (fsynced, renamed) before the session bytes that came after it, as before.
// Session chunks that arrive while a write is in flight and continue it are written together.
// Whoever reads these files back (a takeover sending the session to a new worker, the run once the
// attempt settled) first awaits `idle()`.
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { replaceFile } from '../tools/atomic-write.js';

type Write =
  | { kind: 'session'; offset: number; bytes: Buffer; reset: boolean }
  | { kind: 'checkpoint'; bytes: Buffer }
  | { kind: 'drop-checkpoint' };

export class LaunchFiles {
  private readonly queue: Write[] = [];
  private session: FileHandle | undefined;
  /** Resolves when the queue is empty and nothing is being written. */
  private drained: Promise<void> = Promise.resolve();
  private pumping = false;
  private closed = false;

  constructor(
    private readonly sessionFile: string,
    private readonly checkpointFile: string,
    /** A write that failed: what and why (the launch goes on, as a sync write's failure did). */
    private readonly onError: (what: string, err: unknown) => void,
  ) {}

  /** Session bytes at `offset` (`reset`: the file is rewritten from the start). */
  writeSession(offset: number, bytes: Buffer, reset: boolean): void {
    this.push({ kind: 'session', offset, bytes, reset });
  }

  /** The workspace checkpoint, replacing the last one atomically and durably. */
  writeCheckpoint(bytes: Buffer): void {
    this.push({ kind: 'checkpoint', bytes });
  }

  /** The checkpoint is no longer needed (the attempt ended). */
  dropCheckpoint(): void {
    this.push({ kind: 'drop-checkpoint' });
  }

  /** Resolves once everything queued so far is written. */
  idle(): Promise<void> {
    return this.drained;
  }

  /** Writes what is queued, then closes the session file; nothing may be queued after it. */
  async close(): Promise<void> {
    this.closed = true;
    await this.drained;
    const handle = this.session;
    this.session = undefined;
    await handle?.close().catch(() => undefined);
  }

  private push(w: Write): void {
    if (this.closed) return;
    this.queue.push(w);
    if (this.pumping) return;
    this.pumping = true;
    this.drained = this.pump();
  }

  private async pump(): Promise<void> {
    for (let w = this.queue.shift(); w !== undefined; w = this.queue.shift()) {
      try {
        if (w.kind === 'session') await this.writeSessionNow(this.joinFollowing(w));
        else if (w.kind === 'checkpoint') {
          await mkdir(dirname(this.checkpointFile), { recursive: true });
          await replaceFile(this.checkpointFile, w.bytes);
        } else await rm(this.checkpointFile, { force: true });
      } catch (err) {
        this.onError(w.kind === 'session' ? 'the session' : 'the workspace checkpoint', err);
      }
    }
    this.pumping = false;
  }

  /** `w` with the session chunks queued right behind it that continue it (same file, next offset). */
  private joinFollowing(w: Write & { kind: 'session' }): Write & { kind: 'session' } {
    const parts = [w.bytes];
    let end = w.offset + w.bytes.length;
    for (
      let next = this.queue[0];
      next?.kind === 'session' && !next.reset && next.offset === end;
      next = this.queue[0]
    ) {
      this.queue.shift();
      parts.push(next.bytes);
      end += next.bytes.length;
    }
    return parts.length === 1 ? w : { ...w, bytes: Buffer.concat(parts) };
  }

  private async writeSessionNow(w: Write & { kind: 'session' }): Promise<void> {
    if (w.reset && this.session) {
      const old = this.session;
      this.session = undefined;
      await old.close();
    }
    if (!this.session) {
      await mkdir(dirname(this.sessionFile), { recursive: true });
      // 'r+' keeps what an earlier attempt wrote (a resumed session continues it); absent, it is created.
      this.session = w.reset ? await open(this.sessionFile, 'w') : await openKeeping(this.sessionFile);
    }
    let done = 0;
    while (done < w.bytes.length) {
      const { bytesWritten } = await this.session.write(w.bytes, done, w.bytes.length - done, w.offset + done);
      done += bytesWritten;
    }
  }
}

/** Opens `file` for writing at any offset, keeping its content; creates it when it is not there. */
async function openKeeping(file: string): Promise<FileHandle> {
  try {
    return await open(file, 'r+');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return open(file, 'w');
  }
}
