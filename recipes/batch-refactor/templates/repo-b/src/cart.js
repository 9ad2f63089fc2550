import { log } from './logger.js';

export function addItem(cart, item) {
  cart.push(item);
  log(`added ${item}`);
  return cart.length;
}
