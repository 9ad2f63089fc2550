// The file piscina starts each worker thread with. piscina loads it with require() first; on Node
// 20.19+ require() of an ES module instantiates it synchronously, and a thread terminated in the
// middle of that (a pool destroyed while its threads still load their modules: a run that ends at
// once, a recipe error after the warm start) aborts the whole process with a V8 fatal error in
// ModuleWrap::InstantiateSync (exit 134, seen here about once in 30 quick runs). This CommonJS
// entry loads the ES worker with import() instead, whose interruption is an ordinary exception.
import type { InstanceTask } from '../execution/instance-task.js';
import type { WorkerResult } from '../protocol.js';

type WorkerModule = { default: (task: InstanceTask) => Promise<WorkerResult> };

// Node 22.1+ keeps V8's compiled code of the modules loaded below on disk (module.enableCompileCache;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off), so a new thread mostly reads code instead of compiling
// it: compiling the module graph is a large part of a thread's start (#32). Node 20 has no such
// cache; there this does nothing.
try {
  (require('node:module') as { enableCompileCache?: () => unknown }).enableCompileCache?.();
} catch {
  // a cache folder that cannot be written only costs the compile
}

// Started as the thread starts, so a warm thread has its modules loaded before its first agent.
// Under tsx (tests, npm run dev) this file is worker-entry.cts: tsx compiles worker.ts to CommonJS
// when it is required (no ES module instantiation there), and its import() would not find .ts files.
const worker: Promise<WorkerModule> = __filename.endsWith('.cts')
  ? Promise.resolve().then(() => require('./worker.ts') as WorkerModule)
  : import('./worker.js');
// Nothing may wait on a failed load but the first task, which reports it.
worker.catch(() => undefined);

module.exports = async function handle(task: InstanceTask): Promise<WorkerResult> {
  return (await worker).default(task);
};
