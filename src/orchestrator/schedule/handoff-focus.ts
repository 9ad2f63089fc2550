// The focus an instance's end-of-run compaction is asked to write its summary with. It is the
// product's instruction to the model, never text for people: pull request bodies (publish/
// pull-request-summary.ts) recognize it and leave it out when a summary repeats it.

/** The focus given to the end-of-instance compaction: a handoff, not a continuation. */
export const HANDOFF_FOCUS =
  'This summary is a handoff to the coordinator of a multi-agent run: state what was done, what is left, what blocked you, and which files you changed.';
