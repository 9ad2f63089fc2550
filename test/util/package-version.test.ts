// packageVersion finds the package.json two levels up and reads its version.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { packageVersion } from '../../src/util/package-version.js';

describe('packageVersion', () => {
  it("is the version in the project's package.json", () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(packageVersion()).toBe(pkg.version);
  });
});
