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

/** The refusal message for a command, or undefined when the policy lets it run. */
export function checkBashPolicy(command: string, policy: BashPolicy | undefined): string | undefined {
  if (!policy) return undefined;
  const parts = splitShellCommands(command);
  const whole = command.trim().replace(/\s+/g, ' ');
  const deny = (policy.deny ?? []).map(compileBashRule);
  for (const candidate of [whole, ...parts]) {
    const rule = deny.find((r) => r.test(candidate));
    if (rule) {
      return `Command refused by the bash policy: "${candidate}" matches the deny rule "${rule.source}". Reach the goal another way, or report that this step needs a person.`;
    }
  }
  const allow = (policy.allow ?? []).map(compileBashRule);
  if (allow.length === 0) return undefined;
  for (const part of parts) {
    if (!allow.some((r) => r.test(part))) {
      const list = allow.map((r) => `"${r.source}"`).join(', ');
      return `Command refused by the bash policy: "${part}" matches none of the allow rules (${list}). Only commands matching them may run.`;
    }
  }
  return undefined;
}
