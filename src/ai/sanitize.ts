// Unpaired UTF-16 surrogates make the request body invalid JSON for strict servers, so they go.
const ANY_SURROGATE = /[\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Removes unpaired surrogate halves; strings without surrogates are returned as is (no copy). */
export function sanitizeSurrogates(text: string): string {
  if (!ANY_SURROGATE.test(text)) return text;
  return text.replace(LONE_SURROGATE, '');
}
