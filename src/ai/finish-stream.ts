// How a provider ends its event stream, the same for every provider: an aborted request (with the
// cause when it was not the abort itself), a failure, or done with the reply's stop reason.
import type { AssistantMessageEventStream } from './event-stream.js';
import type { AssistantMessage, StreamOptions } from './types.js';

export function finishStream(
  stream: AssistantMessageEventStream,
  output: AssistantMessage,
  options: StreamOptions,
  errorMessage?: string,
): void {
  if (options.signal?.aborted) {
    output.stopReason = 'aborted';
    output.errorMessage =
      errorMessage && !/abort/i.test(errorMessage) ? `Request was aborted (${errorMessage})` : 'Request was aborted';
    stream.push({ type: 'error', reason: 'aborted', error: output });
    return;
  }
  if (errorMessage !== undefined) {
    output.stopReason = 'error';
    output.errorMessage = errorMessage;
    stream.push({ type: 'error', reason: 'error', error: output });
    return;
  }
  const reason = output.stopReason;
  if (reason === 'stop' || reason === 'length' || reason === 'toolUse')
    stream.push({ type: 'done', reason, message: output });
}
