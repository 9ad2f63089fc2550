// To be implemented by the worker: see slugify.test.js.
// biome-ignore lint/correctness/noUnusedFunctionParameters: the worker agent writes the body
export function slugify(text) {
  throw new Error('slugify is not implemented yet');
}
