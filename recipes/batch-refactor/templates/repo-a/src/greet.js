import { log } from './logger.js';

export function greet(name) {
  log(`hello ${name}`);
  return name.length;
}
