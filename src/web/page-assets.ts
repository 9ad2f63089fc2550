// The files the page is made of, all shipped in the package: the HTML shell, its script and style
// (TS modules holding text, so `tsc` carries them into dist/ with no build step of their own), and
// Preact's ESM builds served straight from node_modules (resolved like any import, so whichever
// copy npm installed is the one served; no CDN). An import map in the shell lets the page script
// import 'preact' by name. The Content-Security-Policy allows scripts from this server only (and
// the import map, by its hash).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { APP_SCRIPT } from './page/app-script.js';
import { PAGE_STYLE } from './page/page-style.js';

export interface Asset {
  type: string;
  body: string | Buffer;
}

const IMPORT_MAP = JSON.stringify({ imports: { preact: '/vendor/preact.mjs', 'preact/hooks': '/vendor/hooks.mjs' } });

const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>orchestrate</title>
<link rel="stylesheet" href="/assets/style.css">
<script type="importmap">${IMPORT_MAP}</script>
<script type="module" src="/assets/app.js"></script>
</head>
<body><div id="app"></div></body>
</html>
`;

/** The page's Content-Security-Policy: nothing from elsewhere; the inline import map by its hash. */
export const PAGE_CSP = [
  "default-src 'self'",
  `script-src 'self' 'sha256-${createHash('sha256').update(IMPORT_MAP).digest('base64')}'`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const JS = 'text/javascript; charset=utf-8';

/** Preact's files by the path the page asks for (resolved once, read on first use). */
const VENDOR: Record<string, string> = { '/vendor/preact.mjs': 'preact', '/vendor/hooks.mjs': 'preact/hooks' };
const vendorCache = new Map<string, Buffer>();

function vendorFile(specifier: string): Buffer {
  let body = vendorCache.get(specifier);
  if (!body) {
    body = readFileSync(createRequire(import.meta.url).resolve(specifier));
    vendorCache.set(specifier, body);
  }
  return body;
}

/** The asset at `path`, or undefined when there is none. */
export function pageAsset(path: string): Asset | undefined {
  if (path === '/' || path === '/index.html') return { type: 'text/html; charset=utf-8', body: PAGE_HTML };
  if (path === '/assets/app.js') return { type: JS, body: APP_SCRIPT };
  if (path === '/assets/style.css') return { type: 'text/css; charset=utf-8', body: PAGE_STYLE };
  const specifier = VENDOR[path];
  return specifier ? { type: JS, body: vendorFile(specifier) } : undefined;
}
