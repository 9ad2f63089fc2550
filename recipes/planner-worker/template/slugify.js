// To be implemented by the worker: see slugify.test.js.
export function slugify(text) {
  throw new Error('slugify is not implemented yet');
}
