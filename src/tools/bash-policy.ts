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
 * command substitutions, respecting quotes. Whitespace inside each is collapsed.
 */
export function splitShellCommands(line: string): string[] {
  const out: string[] = [];
  let current = '';
  let quote: '"' | "'" | undefined;
  const flush = (): void => {
    const cmd = current.trim().replace(/\s+/g, ' ');
    if (cmd !== '') out.push(cmd);
    current = '';
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i] ?? '';
    if (c === '\\' && quote !== "'") {
      current += c + (line[i + 1] ?? '');
      i++;
      continue;
    }
    if (quote === "'") {
      if (c === "'") quote = undefined;
      current += c;
      continue;
    }
    // Substitutions run even inside double quotes, so they separate commands there too.
    if (c === '`' || (c === '$' && line[i + 1] === '(')) {
      flush();
      if (c === '$') i++;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      current += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      current += c;
    } else if (c === ';' || c === '\n' || c === '|' || c === '&' || c === '(' || c === ')') {
      flush();
    } else {
      current += c;
    }
  }
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
