import assert from 'node:assert/strict';
import { logger } from './src/logger.js';
import { report } from './src/report.js';

assert.equal(report(3), 3);
assert.deepEqual(logger.lines, ['total 3']);
console.log('repo-c: ok');
