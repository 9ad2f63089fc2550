// The interactive mode's state as the ink component draws it (InteractiveState) and the keys it
// forwards (KeyPress); the controller (controller.ts) is the only code that changes it.
import type { SessionStats } from '../../runtime/stats.js';
import type { EditorState } from './editor-state.js';
import type { Transcript, TranscriptItem } from './transcript.js';
import type { TreeRow } from './tree-entries.js';

/** The keys the controller reads (ink's Key, narrowed to what is used). */
export interface KeyPress {
  upArrow?: boolean;
  downArrow?: boolean;
  leftArrow?: boolean;
  rightArrow?: boolean;
  pageUp?: boolean;
  pageDown?: boolean;
  home?: boolean;
  end?: boolean;
  return?: boolean;
  escape?: boolean;
  ctrl?: boolean;
  shift?: boolean;
  meta?: boolean;
  tab?: boolean;
  backspace?: boolean;
  delete?: boolean;
}

export interface QueuedMessage {
  kind: 'steer' | 'followUp';
  text: string;
}

export interface Picker {
  kind: 'tree' | 'fork';
  rows: TreeRow[];
  index: number;
}

/** A line of the scrollback that is not part of the conversation (a rewind, a new session). */
export interface SeparatorItem {
  kind: 'separator';
  key: string;
  text: string;
}

/** What was printed into the scrollback, drawn as it was when printed (Ctrl+O then). */
export interface PrintedEntry {
  key: string;
  item: TranscriptItem | SeparatorItem;
  expanded: boolean;
}

export interface InteractiveState {
  transcript: Transcript;
  /** Everything printed into the scrollback so far, in order; only ever appended to. */
  printed: PrintedEntry[];
  /** transcript.items before this index are printed (or were printed before a rewind); the rest is live. */
  printedUpTo: number;
  editor: EditorState;
  activity: 'idle' | 'working' | 'compacting' | 'summarizing';
  queued: QueuedMessage[];
  stats: SessionStats;
  model: string;
  /** Tool results and summaries shown in full (Ctrl+O): the live part and what is printed from now on. */
  expanded: boolean;
  confirmExit: boolean;
  picker?: Picker;
}
