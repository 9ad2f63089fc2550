// Formats a byte count with binary units.
export function formatBytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${Number(n.toFixed(1))} ${units[i]}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(formatBytes(1536));
}
