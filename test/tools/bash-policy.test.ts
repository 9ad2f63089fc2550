import { describe, expect, it } from 'vitest';
import { checkBashPolicy, compileBashRule, splitShellCommands } from '../../src/tools/bash-policy.js';

describe('splitShellCommands', () => {
  it('splits at operators and substitutions but not inside quotes', () => {
    expect(splitShellCommands('a && b || c; d | e & f\ng')).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    expect(splitShellCommands(`echo "x; y" 'p | q' && ls`)).toEqual([`echo "x; y" 'p | q'`, 'ls']);
    expect(splitShellCommands('echo "now $(rm -rf a) ok" `id`')).toEqual(['rm -rf a', 'id', 'echo "now $(…) ok" `…`']);
    expect(splitShellCommands('x $(a $(b) | c)')).toEqual(['b', 'a $(…)', 'c', 'x $(…)']);
    expect(splitShellCommands('(cd x && make)')).toEqual(['cd x', 'make']);
  });
});

describe('bash rules', () => {
  it('treats /.../ as a regex and anything else as a glob over the whole command', () => {
    expect(compileBashRule('/^npm (test|run)/').test('npm run build')).toBe(true);
    expect(compileBashRule('git diff*').test('git diff --stat')).toBe(true);
    expect(compileBashRule('git diff*').test('xgit diff')).toBe(false);
    expect(compileBashRule('npm test *').test('npm test')).toBe(true);
    expect(compileBashRule('npm test *').test('npm testing')).toBe(false);
    expect(compileBashRule('ls ?').test('ls a')).toBe(true);
  });

  it('lets everything run without a policy or with an empty one', () => {
    expect(checkBashPolicy('rm -rf /', undefined)).toBeUndefined();
    expect(checkBashPolicy('rm -rf /', {})).toBeUndefined();
  });

  it('checks deny rules against the whole line and each command in it', () => {
    expect(checkBashPolicy('cd repo && git  push origin', { deny: ['git push*'] })).toMatch(
      /"git push origin" matches the deny rule "git push\*"/,
    );
  });
});

describe('deny rules see through the ways a command is spelled', () => {
  const deny = { deny: ['rm *'] };
  it.each([
    '{ rm x; }',
    'if rm x; then echo; fi',
    '! rm x',
    '/bin/rm x',
    'FOO=1 BAR=2 rm x',
    'sudo -n rm x',
    'env -i A=1 rm x',
    'command rm x',
    'exec rm x',
    'nohup rm x &',
    'timeout 5 rm x',
    'xargs rm < list',
    'bash -c "rm x"',
    "sh -c 'cd a && rm x'",
    'bash -lc "echo ok; /usr/bin/rm x"',
    'eval "rm x"',
    `sh -c "bash -c 'rm x'"`,
  ])('%s is refused', (cmd) => {
    expect(checkBashPolicy(cmd, deny)).toMatch(/refused by the bash policy/);
  });

  it.each(['echo rm x', 'grep "rm x" file', 'bash -c "echo rm"', 'firmware x'])('%s is not refused', (cmd) => {
    expect(checkBashPolicy(cmd, deny)).toBeUndefined();
  });

  it('allow rules ignore compound-command words but not wrappers', () => {
    const allow = { allow: ['npm test *', 'echo *'] };
    expect(checkBashPolicy('{ npm test; }', allow)).toBeUndefined();
    expect(checkBashPolicy('if npm test; then echo ok; fi', allow)).toBeUndefined();
    expect(checkBashPolicy('sudo npm test', allow)).toMatch(/matches none of the allow rules/);
  });
});
