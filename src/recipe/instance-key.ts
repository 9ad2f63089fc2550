// Stable, filesystem-safe keys for fan-out instances. The key names the session file
// (sessions/<task>.<key>.jsonl) and is how resume recognises an instance, so it must depend
// only on the item (or the recipe's `key:` expression), never on list order.
import { createHash } from 'node:crypto';
import { RECIPE_DEFAULTS } from './defaults.js';

/** Fields that usually identify an object item, tried in this order. */
const IDENTITY_FIELDS = ['id', 'key', 'name', 'repo', 'path', 'file', 'dir'] as const;

export function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/** Lower-case letters, digits, '.', '_' and '-'; no leading dots (no hidden or '..' names). */
export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
}

/** Canonical JSON (sorted keys) so equal items hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * A safe key for `source`. Long or empty slugs, and structures without an identity field, get a
 * hash of the full text so distinct items never share a key by truncation.
 */
export function instanceKey(source: string, isStructure = false): string {
  const max = RECIPE_DEFAULTS.maxKeyLength;
  const slug = slugify(source);
  if (!isStructure && slug.length > 0 && slug.length <= max) return slug;
  const head = isStructure ? '' : slug.slice(0, max - 9).replace(/[-.]+$/, '');
  return head ? `${head}-${shortHash(source)}` : shortHash(source);
}

/** The key of a for_each item (or of a `key:` expression's value). */
export function itemKey(item: unknown): string {
  if (typeof item === 'string') return instanceKey(item);
  if (typeof item === 'number' || typeof item === 'boolean') return instanceKey(String(item));
  if (item && typeof item === 'object' && !Array.isArray(item)) {
    for (const field of IDENTITY_FIELDS) {
      const v = (item as Record<string, unknown>)[field];
      if (typeof v === 'string' || typeof v === 'number') return instanceKey(String(v));
    }
  }
  return instanceKey(canonicalJson(item), true);
}

/** Instance id: the task id alone, or `<task>.<key>` for a fan-out (task ids never contain '.'). */
export function instanceId(taskId: string, key?: string): string {
  return key === undefined ? taskId : `${taskId}.${key}`;
}
