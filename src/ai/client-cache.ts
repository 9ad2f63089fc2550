// SDK clients hold connection pools worth reusing across turns, so each provider keeps one client
// per API key and base URL instead of making a new one for every call.

export class ClientCache<Client> {
  private readonly clients = new Map<string, Client>();

  /** The client for this key and URL, made by `make` the first time it is asked for. */
  get(apiKey: string, baseURL: string, make: () => Client): Client {
    const key = `${baseURL}\n${apiKey}`;
    let client = this.clients.get(key);
    if (!client) {
      client = make();
      this.clients.set(key, client);
    }
    return client;
  }
}
