// The report's "Merge train" section (`land: train`): per repository, each instance whose work
// went through the train, whether it landed, is being repaired or failed, after how many repairs,
// with the verify result on its merged tree, and every step in log order. Empty without a train.
import type { RunState } from '../../run/run-fold.js';
import { formatDateTime } from '../format-units.js';
import { trainCarLine, trainStepText, trainSummaries } from '../train-text.js';
import { escapeHtml } from './html-text.js';

export function trainSection(state: RunState): string {
  const cars = Object.values(state.train.cars);
  if (cars.length === 0) return '';
  const rows = cars.map(
    (car) => `<tr><td>${escapeHtml(car.repo || '.')}</td><td>${escapeHtml(trainCarLine(car))}</td></tr>`,
  );
  const steps = state.train.steps.map(
    (s) => `<div class="muted">${escapeHtml(formatDateTime(s.ts))} ${escapeHtml(trainStepText(s))}</div>`,
  );
  return `<section><h2>Merge train <span class="muted">(${escapeHtml(trainSummaries(state.train).join('; '))})</span></h2><div class="scroll"><table class="board"><thead><tr><th>Repository</th><th>Instance</th></tr></thead><tbody>${rows.join('')}</tbody></table></div><details><summary>Steps</summary>${steps.join('')}</details></section>\n`;
}
