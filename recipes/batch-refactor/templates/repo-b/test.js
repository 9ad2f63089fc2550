// Passes once cart.js and checkout.js log through logger.info instead of log().
import assert from 'node:assert/strict';
import { addItem } from './src/cart.js';
import { checkout } from './src/checkout.js';
import { logger } from './src/logger.js';

const cart = [];
addItem(cart, 'tea');
assert.deepEqual(checkout(cart), ['tea']);
assert.deepEqual(logger.lines, ['added tea', 'checkout of 1 items'], 'both modules must log through logger.info');
console.log('repo-b: ok');
