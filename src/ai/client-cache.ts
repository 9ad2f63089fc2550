// SDK clients hold connection pools worth reusing across turns, so each provider keeps one client
// per API key and base URL instead of making a new one for every call. Every client is made with
// the same settings, whichever SDK it is: no retries of its own (the ai layer has the one retry
// loop, and it must see every failure), and a fetch that keeps error bodies (provider-error.ts).
import { errorBodyKeepingFetch } from './provider-error.js';

/** What every SDK client is made with (both SDKs' constructors take these options). */
export interface SdkClientSettings {
  apiKey: string;
  baseURL: string;
  maxRetries: 0;
  fetch: typeof fetch;
}

export class ClientCache<Client> {
  private readonly clients = new Map<string, Client>();

  /** The client for this key and URL, made by `make` from the shared settings the first time it is asked for. */
  get(apiKey: string, baseURL: string, make: (settings: SdkClientSettings) => Client): Client {
    const key = `${baseURL}\n${apiKey}`;
    let client = this.clients.get(key);
    if (!client) {
      client = make({ apiKey, baseURL, maxRetries: 0, fetch: errorBodyKeepingFetch() });
      this.clients.set(key, client);
    }
    return client;
  }
}
