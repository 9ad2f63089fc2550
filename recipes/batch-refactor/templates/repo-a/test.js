// Passes once greet() logs through logger.info instead of log().
import assert from 'node:assert/strict';
import { greet } from './src/greet.js';
import { logger } from './src/logger.js';

assert.equal(greet('ada'), 3);
assert.deepEqual(logger.lines, ['hello ada'], 'greet() must log through logger.info');
console.log('repo-a: ok');
