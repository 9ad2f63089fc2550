// How RunStore writes run.jsonl (#41): the log is opened at the first write of an event-loop turn
// and closed at its end, so a burst of state events costs a write each. These tests hold what that
// must not change: each state event is in the file when append() returns, in order, no descriptor
// outlives the turn, and a log replaced or a run folder moved between turns is written where it is now.
import { mkdtempSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRunLog, RunStore } from '../../src/run/run-store.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'runlog-writes-'));
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const openFds = () => readdirSync('/proc/self/fd').length;
const queued = (i: number) => ({ type: 'instance_queued' as const, task: 't', key: `t#${i}`, attempt: 1 });
const keysIn = (file: string) => readRunLog(file).events.map((e) => ('key' in e ? e.key : e.type));

describe('run.jsonl writes within one event-loop turn', () => {
  it('has each state event of a burst on file when append returns, in order', () => {
    const store = RunStore.create(tmp(), 'burst');
    for (let i = 0; i < 50; i++) {
      store.append(queued(i));
      // Read through another descriptor, as a kill -9 would leave it.
      expect(readFileSync(store.logFile, 'utf8').trim().split('\n')).toHaveLength(i + 1);
    }
    expect(keysIn(store.logFile)).toEqual(Array.from({ length: 50 }, (_, i) => `t#${i}`));
  });

  it('keeps no descriptor of the log open past the turn', async () => {
    await nextTurn();
    const before = openFds();
    const store = RunStore.create(tmp(), 'fds');
    for (let i = 0; i < 20; i++) store.append(queued(i));
    expect(openFds()).toBe(before + 1);
    await nextTurn();
    expect(openFds()).toBe(before);
  });

  it('writes into a log replaced between turns, and into the folder where a moved run now is', async () => {
    const runs = tmp();
    const store = RunStore.create(runs, 'moved');
    store.append(queued(0));
    await nextTurn();
    // Replaced by rename (a copy put back, say): the old inode must not get the next event.
    const old = readFileSync(store.logFile, 'utf8');
    writeFileSync(`${store.logFile}.new`, old);
    renameSync(`${store.logFile}.new`, store.logFile);
    store.append(queued(1));
    expect(keysIn(store.logFile)).toEqual(['t#0', 't#1']);
    await nextTurn();
    // The folder moved away and a fresh one in its place: the next turn's event goes to the new file.
    renameSync(store.dir, join(runs, 'elsewhere'));
    RunStore.create(runs, 'moved');
    store.append(queued(2));
    expect(keysIn(store.logFile)).toEqual(['t#2']);
    expect(keysIn(join(runs, 'elsewhere', 'run.jsonl'))).toEqual(['t#0', 't#1']);
  });

  it('appends to the new log when the store itself replaces run.jsonl within the turn', () => {
    const store = RunStore.create(tmp(), 'rewritten');
    store.append(queued(0));
    // The same turn: the descriptor opened for t#0 points at the file writeFile replaces.
    store.writeFile('run.jsonl', readFileSync(store.logFile, 'utf8'));
    store.append(queued(1));
    expect(keysIn(store.logFile)).toEqual(['t#0', 't#1']);
  });
});
