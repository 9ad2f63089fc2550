// The status line under the editor: model, context use, session cost, and what the agent does.
import type { SessionStats } from '../../runtime/stats.js';
import { formatCost } from '../format-units.js';

export interface StatusInput {
  model: string;
  stats: Pick<SessionStats, 'cost'> & {
    context: Pick<SessionStats['context'], 'tokens' | 'contextWindow' | 'percent'>;
  };
  /** 'idle', 'working' (a run), 'compacting', 'summarizing' (a /tree branch summary). */
  activity: 'idle' | 'working' | 'compacting' | 'summarizing';
  /** Steering / follow-up messages waiting for the agent. */
  queued: number;
  /** A first Ctrl+C was pressed: the next one quits. */
  confirmExit: boolean;
}

/** 12345 -> "12.3k", 200000 -> "200k", 1000000 -> "1M": short enough for an 80-column line. */
export function shortTokens(n: number): string {
  if (n < 1_000) return String(Math.round(n));
  if (n < 1_000_000) {
    const k = n / 1_000;
    return `${k < 100 ? k.toFixed(1).replace(/\.0$/, '') : Math.round(k)}k`;
  }
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, '')}M`;
}

/** Left part (facts) and right part (activity and hints). */
export function statusParts(s: StatusInput): { left: string; right: string } {
  const c = s.stats.context;
  const left = `${s.model} · ctx ${shortTokens(c.tokens)}/${shortTokens(c.contextWindow)} (${c.percent}%) · ${formatCost(s.stats.cost)}`;
  let right: string;
  if (s.confirmExit) right = 'Ctrl+C again to quit';
  else if (s.activity === 'working') right = `working · Esc aborts${s.queued > 0 ? ` · ${s.queued} queued` : ''}`;
  else if (s.activity === 'compacting') right = 'compacting…';
  else if (s.activity === 'summarizing') right = 'summarizing branch · Esc cancels';
  else right = '/help';
  return { left, right };
}
