// A real OTLP/HTTP trace receiver for tests: a node:http server on 127.0.0.1 that accepts what a
// collector accepts (POST /v1/traces, Content-Type application/x-protobuf, gzip or not) and
// decodes each ExportTraceServiceRequest with the protobuf reader @opentelemetry/otlp-transformer
// ships (it ships no request decoder of its own, so the message layout of
// opentelemetry/proto/trace/v1/trace.proto is walked here). Anything else gets the status a
// collector gives (404, 415, 400). The raw bytes of every request are kept for secret scans.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { ProtobufReader } from '@opentelemetry/otlp-transformer/build/src/common/protobuf/protobuf-reader.js';

export type AttrValue = string | number | boolean | AttrValue[] | undefined;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, AttrValue>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  resource: Record<string, AttrValue>;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Every request body as received (before decompression), for scanning for secrets. */
  raw: Buffer[];
  /** Resolves once `predicate` holds for the spans received so far. */
  waitFor(what: string, predicate: (spans: ReceivedSpan[]) => boolean): Promise<void>;
  close(): Promise<void>;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** Reads a message's fields: calls `onField` for each; unknown fields are skipped by the caller's default. */
function fields(buf: Uint8Array, onField: (field: number, wire: number, r: ProtobufReader) => boolean): void {
  const r = new ProtobufReader(buf);
  while (!r.isAtEnd()) {
    const { fieldNumber, wireType } = r.readTag();
    if (!onField(fieldNumber, wireType, r)) r.skip(wireType);
  }
}

function fixed64(r: ProtobufReader, buf: Uint8Array): bigint {
  const v = Buffer.from(buf.buffer, buf.byteOffset + r.pos, 8).readBigUInt64LE(0);
  r.pos += 8;
  return v;
}

function double(r: ProtobufReader, buf: Uint8Array): number {
  const v = Buffer.from(buf.buffer, buf.byteOffset + r.pos, 8).readDoubleLE(0);
  r.pos += 8;
  return v;
}

function anyValue(buf: Uint8Array): AttrValue {
  let out: AttrValue;
  fields(buf, (f, w, r) => {
    if (f === 1 && w === 2) out = r.readString();
    else if (f === 2 && w === 0) out = r.readVarint() !== 0;
    else if (f === 3 && w === 0) out = r.readVarint();
    else if (f === 4 && w === 1) out = double(r, buf);
    else if (f === 5 && w === 2) {
      const list: AttrValue[] = [];
      fields(r.readBytes(), (f2, w2, r2) => {
        if (f2 !== 1 || w2 !== 2) return false;
        list.push(anyValue(r2.readBytes()));
        return true;
      });
      out = list;
    } else return false;
    return true;
  });
  return out;
}

function keyValues(into: Record<string, AttrValue>, buf: Uint8Array): void {
  let key = '';
  let value: AttrValue;
  fields(buf, (f, w, r) => {
    if (f === 1 && w === 2) key = r.readString();
    else if (f === 2 && w === 2) value = anyValue(r.readBytes());
    else return false;
    return true;
  });
  into[key] = value;
}

function span(buf: Uint8Array, resource: Record<string, AttrValue>): ReceivedSpan {
  const s: ReceivedSpan = {
    traceId: '',
    spanId: '',
    parentSpanId: '',
    name: '',
    kind: 0,
    startNs: 0n,
    endNs: 0n,
    attributes: {},
    status: { code: 0, message: '' },
    resource,
  };
  fields(buf, (f, w, r) => {
    if (f === 1 && w === 2) s.traceId = hex(r.readBytes());
    else if (f === 2 && w === 2) s.spanId = hex(r.readBytes());
    else if (f === 4 && w === 2) s.parentSpanId = hex(r.readBytes());
    else if (f === 5 && w === 2) s.name = r.readString();
    else if (f === 6 && w === 0) s.kind = r.readVarint();
    else if (f === 7 && w === 1) s.startNs = fixed64(r, buf);
    else if (f === 8 && w === 1) s.endNs = fixed64(r, buf);
    else if (f === 9 && w === 2) keyValues(s.attributes, r.readBytes());
    else if (f === 15 && w === 2)
      fields(r.readBytes(), (f2, w2, r2) => {
        if (f2 === 2 && w2 === 2) s.status.message = r2.readString();
        else if (f2 === 3 && w2 === 0) s.status.code = r2.readVarint();
        else return false;
        return true;
      });
    else return false;
    return true;
  });
  return s;
}

/** Decodes an ExportTraceServiceRequest into its spans. */
export function decodeTraceRequest(body: Uint8Array): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  fields(body, (f, w, r) => {
    if (f !== 1 || w !== 2) return false;
    const resourceSpans = r.readBytes();
    const resource: Record<string, AttrValue> = {};
    const scopeSpans: Uint8Array[] = [];
    fields(resourceSpans, (f2, w2, r2) => {
      if (f2 === 1 && w2 === 2)
        fields(r2.readBytes(), (f3, w3, r3) => {
          if (f3 !== 1 || w3 !== 2) return false;
          keyValues(resource, r3.readBytes());
          return true;
        });
      else if (f2 === 2 && w2 === 2) scopeSpans.push(r2.readBytes());
      else return false;
      return true;
    });
    for (const ss of scopeSpans)
      fields(ss, (f3, w3, r3) => {
        if (f3 !== 2 || w3 !== 2) return false;
        out.push(span(r3.readBytes(), resource));
        return true;
      });
    return true;
  });
  return out;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const raw: Buffer[] = [];
  const waiters: { predicate: (s: ReceivedSpan[]) => boolean; resolve: () => void }[] = [];
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    if (req.headers['content-type'] !== 'application/x-protobuf') {
      res.writeHead(415).end();
      return;
    }
    raw.push(body);
    let decoded: ReceivedSpan[];
    try {
      decoded = decodeTraceRequest(req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body);
    } catch {
      res.writeHead(400).end();
      return;
    }
    spans.push(...decoded);
    // An empty ExportTraceServiceResponse: everything accepted.
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    for (const w of waiters.splice(0)) {
      if (w.predicate(spans)) w.resolve();
      else waiters.push(w);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    raw,
    waitFor: (_what, predicate) =>
      predicate(spans) ? Promise.resolve() : new Promise((resolve) => waiters.push({ predicate, resolve })),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
