// Image type detection by magic bytes: a file's name says nothing about what it holds.

/** Bytes needed to recognise every supported format. */
export const IMAGE_SNIFF_BYTES = 12;

/** The MIME type of a PNG, JPEG, GIF or WebP image, or undefined for anything else. */
export function detectImageMime(bytes: Uint8Array): string | undefined {
  const at = (i: number): number => bytes[i] ?? -1;
  const ascii = (from: number, text: string): boolean => [...text].every((ch, k) => at(from + k) === ch.charCodeAt(0));
  if (at(0) === 0x89 && ascii(1, 'PNG\r\n\x1a\n')) return 'image/png';
  if (at(0) === 0xff && at(1) === 0xd8 && at(2) === 0xff) return 'image/jpeg';
  if (ascii(0, 'GIF87a') || ascii(0, 'GIF89a')) return 'image/gif';
  if (ascii(0, 'RIFF') && ascii(8, 'WEBP')) return 'image/webp';
  return undefined;
}
