// The one-repository fixture of the merge-train tests (#39): six tasks, two editing files of their
// own, two editing one file in separate hunks, two writing the same line, and the check every
// landing must pass. The landing tests and the kill -9 test build their recipes around it.

/** The six tasks, in recipe order. */
export const TRAIN_TASKS = ['one', 'two', 'three', 'four', 'five', 'six'];

/**
 * What each task's agent runs (a bash command in its worktree). A write goes to a `.part` file
 * renamed over the old one (the repository ignores `*.part`), so a call a kill -9 cuts off leaves
 * the old content or the new, never a file the shell truncated and had no time to write.
 */
export const TRAIN_EDITS: Record<string, string> = {
  one: "printf 'a done\\\\n' > a.txt.part && mv a.txt.part a.txt",
  two: "printf 'b done\\\\n' > b.txt.part && mv b.txt.part b.txt",
  three: "sed -i '1s/.*/top by three/' shared.txt",
  four: "sed -i '10s/.*/bottom by four/' shared.txt",
  five: "printf 'value=five\\\\n' > same.txt.part && mv same.txt.part same.txt",
  six: "printf 'value=six\\\\n' > same.txt.part && mv same.txt.part same.txt",
};

/** verify: no conflict markers anywhere, same.txt one well-formed line, shared.txt ten lines. */
export const TRAIN_CHECK = `set -e
! grep -l '^<<<<<<<' *.txt
grep -Eq '^value=[a-z,]+$' same.txt
test "$(wc -l < same.txt)" -eq 1
test "$(wc -l < shared.txt)" -eq 10
`;

/** The repository's files before any task ran (under `repo/`), with `check` as its check.sh. */
export function trainRepoFiles(check: string): Record<string, string> {
  return {
    'repo/a.txt': 'a\n',
    'repo/b.txt': 'b\n',
    'repo/same.txt': 'value=base\n',
    'repo/shared.txt': `${Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n')}\n`,
    'repo/check.sh': check,
    'repo/.gitignore': '*.part\n',
  };
}
