import { logger } from './logger.js';

export function report(total) {
  logger.info(`total ${total}`);
  return total;
}
