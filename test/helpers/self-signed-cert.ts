// A key and a certificate (its own CA) for 127.0.0.1 and localhost, made with openssl for the
// tests that need real TLS (an https forge, Redis over TLS).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SelfSignedCert {
  key: Buffer;
  cert: Buffer;
  keyFile: string;
  certFile: string;
}

/** Writes tls-key.pem and tls-cert.pem into `dir`. */
export function selfSignedCert(dir: string): SelfSignedCert {
  const keyFile = join(dir, 'tls-key.pem');
  const certFile = join(dir, 'tls-cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return { key: readFileSync(keyFile), cert: readFileSync(certFile), keyFile, certFile };
}
