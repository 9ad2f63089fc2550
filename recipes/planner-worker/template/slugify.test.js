import assert from 'node:assert/strict';
import { test } from 'node:test';
import { slugify } from './slugify.js';

test('lower-cases and joins words with dashes', () => {
  assert.equal(slugify('Hello World'), 'hello-world');
});

test('removes accents', () => {
  assert.equal(slugify('Crème Brûlée'), 'creme-brulee');
});

test('drops punctuation and collapses separators', () => {
  assert.equal(slugify('  Ready, set... go!  '), 'ready-set-go');
});
