// A command policy for bash: deny and allow patterns checked against every simple command in
// a command line. It stops a well-meaning model from running what a recipe forbids; it is not
// a sandbox (a determined script can always hide a command from a pattern).

export interface BashPolicy {
  /** When non-empty, every command in the line must match one of these. */
  allow?: string[];
  /** A command matching any of these is refused. */
  deny?: string[];
}

interface Rule {
  source: string;
  test(command: string): boolean;
}

/**
 * `/regex/flags` is a regular expression (searched anywhere in the command); anything else is a
 * glob-like pattern over the whole command where `*` is any text and `?` one character.
 */
export function compileBashRule(pattern: string): Rule {
  const re = /^\/(.+)\/([a-z]*)$/s.exec(pattern);
  if (re) {
    const regex = new RegExp(re[1] ?? '', re[2]);
    return { source: pattern, test: (c) => regex.test(c) };
  }
  const words = pattern.trim().replace(/\s+/g, ' ');
  // "git diff *" also allows a bare "git diff": a trailing " *" means "with any arguments".
  const bare = words.endsWith(' *') ? words.slice(0, -2) : undefined;
  const toRegex = (glob: string): string =>
    glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.');
  const regex = new RegExp(bare !== undefined ? `^${toRegex(bare)}(?: .*)?$` : `^${toRegex(words)}$`, 's');
  return { source: pattern, test: (c) => regex.test(c) };
}

/**
 * Splits a command line into its simple commands at `;`, `&&`, `||`, `|`, `&`, newlines and
 * parentheses, respecting quotes. Command substitutions (`$(...)`, backticks) become commands
 * of their own, and the outer command keeps a `$(…)` placeholder. Whitespace is collapsed.
 */
export function splitShellCommands(line: string): string[] {
  const out: string[] = [];
  // One entry per nesting level: the text gathered so far and the quote/substitution context.
  type Level = { text: string; context: 'top' | '$(' | '`' };
  const levels: Level[] = [{ text: '', context: 'top' }];
  let quote: '"' | "'" | undefined;
  const quotes: ('"' | "'" | undefined)[] = [];
  const level = (): Level => levels[levels.length - 1] as Level;
  const flush = (): void => {
    const cmd = level().text.trim().replace(/\s+/g, ' ');
    if (cmd !== '') out.push(cmd);
    level().text = '';
  };
  const enter = (context: '$(' | '`'): void => {
    level().text += context === '$(' ? '$(…)' : '`…`';
    quotes.push(quote);
    quote = undefined;
    levels.push({ text: '', context });
  };
  const leave = (): void => {
    flush();
    levels.pop();
    quote = quotes.pop();
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i] ?? '';
    if (quote === "'") {
      if (c === "'") quote = undefined;
      level().text += c;
      continue;
    }
    if (c === '\\') {
      level().text += c + (line[i + 1] ?? '');
      i++;
      continue;
    }
    // Substitutions run even inside double quotes.
    if (c === '$' && line[i + 1] === '(') {
      enter('$(');
      i++;
      continue;
    }
    if (c === '`') {
      if (level().context === '`' && quote === undefined) leave();
      else enter('`');
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      level().text += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      level().text += c;
    } else if (c === ')' && level().context === '$(') {
      leave();
    } else if (c === ';' || c === '\n' || c === '|' || c === '&' || c === '(' || c === ')') {
      flush();
    } else {
      level().text += c;
    }
  }
  while (levels.length > 1) leave(); // unterminated substitutions still count
  flush();
  return out;
}

/** Shell words that open or close a compound command; they are not the command itself. */
const RESERVED = new Set(['{', '}', '!', 'if', 'then', 'elif', 'else', 'fi', 'do', 'done', 'while', 'until', 'time']);
/** Commands that run their arguments as a command (their options are skipped too). */
const WRAPPERS = new Set([
  'sudo',
  'doas',
  'env',
  'command',
  'builtin',
  'exec',
  'nohup',
  'nice',
  'ionice',
  'stdbuf',
  'xargs',
  'timeout',
  'setsid',
  'time',
]);
const SHELLS = new Set(['bash', 'sh', 'dash', 'zsh', 'ksh']);
/** How deep `bash -c "..."` inside `sh -c '...'` is followed. */
const MAX_NESTING = 4;

/** The command without compound-command words around it: `{ rm x; }` and `if rm x` are `rm x`. */
function stripReserved(words: string[]): string[] {
  let start = 0;
  let end = words.length;
  while (start < end && RESERVED.has(words[start]!)) start++;
  while (end > start && RESERVED.has(words[end - 1]!)) end--;
  return words.slice(start, end);
}

/** A quoted or bare shell word at the start of `text`, unquoted; undefined when there is none. */
function firstWord(text: string): string | undefined {
  const t = text.trimStart();
  const q = t[0];
  if (q === '"' || q === "'") {
    let out = '';
    for (let i = 1; i < t.length; i++) {
      const c = t[i]!;
      if (c === q) return out;
      if (c === '\\' && q === '"' && i + 1 < t.length) {
        out += t[++i];
        continue;
      }
      out += c;
    }
    return out;
  }
  const m = /^\S+/.exec(t);
  return m ? m[0] : undefined;
}

/**
 * The ways one simple command can be read for a deny check: as written; without leading
 * variable assignments and wrappers (`FOO=1 sudo env rm x` is `rm x`); with the program's
 * path dropped (`/bin/rm x` is `rm x`); and the commands inside `bash -c "..."` or `eval ...`.
 */
function denyCandidates(part: string, depth = 0): string[] {
  const out = new Set<string>([part]);
  let words = stripReserved(part.split(' '));
  out.add(words.join(' '));
  for (let guard = 0; guard < 8 && words.length > 0; guard++) {
    const head = words[0]!;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(head)) words = words.slice(1);
    else if (WRAPPERS.has(head.split('/').pop()!)) {
      let i = 1;
      while (
        i < words.length &&
        (words[i]!.startsWith('-') ||
          (head === 'env' && words[i]!.includes('=')) ||
          (head === 'timeout' && /^\d/.test(words[i]!)))
      )
        i++;
      words = words.slice(i);
    } else break;
    if (words.length > 0) out.add(words.join(' '));
  }
  if (words.length > 0 && words[0]!.includes('/')) {
    const base = [words[0]!.split('/').pop()!, ...words.slice(1)].join(' ');
    out.add(base);
    words = base.split(' ');
  }
  if (depth < MAX_NESTING && words.length > 0) {
    const program = words[0]!;
    const rest = words.slice(1).join(' ');
    let inner: string | undefined;
    if (program === 'eval') inner = rest.replace(/^(["'])([\s\S]*)\1$/, '$2');
    else if (SHELLS.has(program)) {
      const c = /(?:^|\s)-[a-z]*c\s+([\s\S]*)$/.exec(rest);
      if (c) inner = firstWord(c[1]!);
    }
    if (inner) for (const p of splitShellCommands(inner)) for (const c of denyCandidates(p, depth + 1)) out.add(c);
  }
  return [...out].filter((c) => c !== '');
}

/** The refusal message for a command, or undefined when the policy lets it run. */
export function checkBashPolicy(command: string, policy: BashPolicy | undefined): string | undefined {
  if (!policy) return undefined;
  const parts = splitShellCommands(command);
  const whole = command.trim().replace(/\s+/g, ' ');
  const deny = (policy.deny ?? []).map(compileBashRule);
  for (const candidate of [whole, ...parts.flatMap((p) => denyCandidates(p))]) {
    const rule = deny.find((r) => r.test(candidate));
    if (rule) {
      return `Command refused by the bash policy: "${candidate}" matches the deny rule "${rule.source}". Reach the goal another way, or report that this step needs a person.`;
    }
  }
  const allow = (policy.allow ?? []).map(compileBashRule);
  if (allow.length === 0) return undefined;
  for (const written of parts) {
    // Compound-command words are not commands; wrappers and paths are not stripped for allow.
    const part = stripReserved(written.split(' ')).join(' ');
    if (part === '') continue;
    if (!allow.some((r) => r.test(part))) {
      const list = allow.map((r) => `"${r.source}"`).join(', ');
      return `Command refused by the bash policy: "${part}" matches none of the allow rules (${list}). Only commands matching them may run.`;
    }
  }
  return undefined;
}
