// The logger every module should use; log() is the old helper being phased out.
export const logger = {
  lines: [],
  info(message) {
    this.lines.push(message);
  },
};

/** @deprecated use logger.info */
export function log(message) {
  console.log(message);
}
