// Cache warm-up before a wide fan-out wave. Every instance of a fan-out sends the same prefix
// (tools + the agent's shared system text, see src/tools/system-prompt.ts). When a whole wave
// starts at once, every first request misses the cache and writes that prefix (1.25x the input
// price) because a cache entry is only readable once the response that wrote it has started. So
// the first instance's first request goes out alone; the wave's other first requests wait until
// it starts streaming, and then read the prefix (0.1x). It must never hold the run up: the wave
// goes on when that request streams, fails, is refused or cancelled, when its permit ends in any
// way, after maxWaitMs, or when the broker closes. A wave's held requests wait in a paused p-queue
// that opening the wave starts; a cancelled request leaves it at once.
import PQueue from 'p-queue';
import type { PermitGate, PermitOutcome, PermitRequest } from './permit-broker.js';
import { RECIPE_DEFAULTS } from '../../recipe/defaults.js';

/** The first request normally streams within seconds; past this the wave stops waiting for it. */
export const CACHE_WARMUP_MAX_WAIT_MS = 20_000;

interface Wave {
  members: ReadonlySet<string>;
  open: boolean;
  /** The instance whose first request warms the cache, once one asked. */
  leader?: string;
  leaderRequest?: PermitRequest;
  leaderSlot?: number;
  /** The wave's other first requests, held until the wave opens (started then). */
  held: PQueue;
  timer?: NodeJS.Timeout;
}

export interface CacheWarmupOptions {
  maxWaitMs?: number;
  /** Called when a wave opens, with the reason (tests and logs). */
  onOpen?: (task: string, reason: string) => void;
}

/**
 * Whether a fan-out of `instances` warms the cache first: the recipe's `cache_warmup` threshold
 * (undefined: the default), and only where there is a prompt cache (the anthropic provider).
 */
export function warmsCache(minInstances: number | false | undefined, provider: string, instances: number): boolean {
  if (minInstances === false || provider !== 'anthropic') return false;
  return instances >= (minInstances ?? RECIPE_DEFAULTS.cacheWarmupMinInstances);
}

/** The instance a permit request is for: its `instance:<id>` budget scope. */
function instanceOf(req: PermitRequest): string | undefined {
  const scope = req.scopes.find((s) => s.startsWith('instance:'));
  return scope?.slice('instance:'.length);
}

export class CacheWarmup implements PermitGate {
  private readonly waves = new Map<string, Wave>();
  private readonly maxWaitMs: number;

  constructor(private readonly opts: CacheWarmupOptions = {}) {
    this.maxWaitMs = opts.maxWaitMs ?? CACHE_WARMUP_MAX_WAIT_MS;
  }

  /** Warms the cache before `task`'s instances (a fan-out wave) call the model. */
  arm(task: string, instanceIds: readonly string[]): void {
    this.waves.set(task, { members: new Set(instanceIds), open: false, held: new PQueue({ autoStart: false }) });
  }

  /** Whether `task` still holds its wave back (tests). */
  isWarming(task: string): boolean {
    const w = this.waves.get(task);
    return w !== undefined && !w.open;
  }

  hold(req: PermitRequest): Promise<void> | undefined {
    const instance = instanceOf(req);
    if (instance === undefined) return undefined;
    const found = this.waveOf(instance);
    if (!found) return undefined;
    const [task, wave] = found;
    if (wave.leader === undefined) {
      wave.leader = instance;
      wave.leaderRequest = req;
      wave.timer = setTimeout(
        () => this.open(task, `the first request did not start within ${this.maxWaitMs} ms`),
        this.maxWaitMs,
      );
      wave.timer.unref?.();
      return undefined;
    }
    if (wave.leader === instance) return undefined;
    // A cancelled request stops waiting at once; the broker then refuses it as aborted.
    const signal = req.signal;
    if (signal?.aborted) return undefined;
    const settled = (): void => undefined;
    return wave.held.add(() => undefined, { signal }).then(settled, settled);
  }

  outcome(req: PermitRequest, outcome: PermitOutcome): void {
    for (const [task, wave] of this.waves) {
      if (wave.open || wave.leaderRequest !== req) continue;
      if (outcome.ok) wave.leaderSlot = outcome.slotId;
      else this.open(task, `the first request was refused (${outcome.reason})`);
    }
  }

  settled(slotId: number, started: boolean): void {
    for (const [task, wave] of this.waves) {
      if (!wave.open && wave.leaderSlot === slotId)
        this.open(task, started ? 'the first request started streaming' : 'the first request ended without a response');
    }
  }

  close(): void {
    for (const task of this.waves.keys()) this.open(task, 'the run is stopping');
  }

  holding(): boolean {
    for (const wave of this.waves.values()) if (!wave.open && wave.held.size > 0) return true;
    return false;
  }

  private waveOf(instance: string): [string, Wave] | undefined {
    for (const entry of this.waves) if (!entry[1].open && entry[1].members.has(instance)) return entry;
    return undefined;
  }

  private open(task: string, reason: string): void {
    const wave = this.waves.get(task);
    if (!wave || wave.open) return;
    wave.open = true;
    if (wave.timer) clearTimeout(wave.timer);
    wave.held.start();
    this.opts.onOpen?.(task, reason);
  }
}
