// How a publish remote is reached: the kind of remote its text names (an https or ssh URL, a
// local repository, a remote name of the repository) and the transport orchestrate uses for it
// with a given forge. A github/gitlab forge pushes over https with its token, also when the remote
// is the forge's ssh address (git@github.com:owner/repo.git: the same repository over https, so
// one token does the pushes and the API); `forge: git` pushes over ssh with the user's own ssh
// (agent, ~/.ssh/config, known_hosts). Pure: `validate` states the transport from it before a
// run, and publishing takes the same decision when it pushes.

/** What a remote's text names. */
export type RemoteAddress =
  | { kind: 'https'; host: string; path: string }
  | { kind: 'ssh'; host: string; path: string; user?: string; port?: string }
  | { kind: 'local'; path: string }
  | { kind: 'name'; name: string }
  | { kind: 'unsupported'; scheme: string };

/**
 * Parses a remote the way git reads a URL: scheme://..., else `[user@]host:path` (scp-like, when
 * no slash comes before the first colon), else a path (./, ../, /) or a remote's name.
 */
export function parseRemote(text: string): RemoteAddress {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text)?.[1]?.toLowerCase();
  if (scheme === 'https') {
    try {
      const u = new URL(text);
      return { kind: 'https', host: u.host, path: u.pathname.replace(/^\/+/, '') };
    } catch {
      return { kind: 'unsupported', scheme };
    }
  }
  if (scheme === 'ssh' || scheme === 'git+ssh' || scheme === 'ssh+git') {
    const m = /^[^:]+:\/\/(?:([^@/]+)@)?(\[[^\]]+\]|[^:/]+)(?::(\d+))?\/(.*)$/.exec(text);
    if (!m) return { kind: 'unsupported', scheme };
    return {
      kind: 'ssh',
      host: m[2]!.replace(/^\[|\]$/g, ''),
      path: m[4]!.replace(/^~\/?/, ''),
      ...(m[1] ? { user: m[1] } : {}),
      ...(m[3] ? { port: m[3] } : {}),
    };
  }
  if (scheme === 'file') return { kind: 'local', path: text };
  if (scheme) return { kind: 'unsupported', scheme };
  if (text.startsWith('/') || text.startsWith('./') || text.startsWith('../')) return { kind: 'local', path: text };
  const colon = text.indexOf(':');
  const slash = text.indexOf('/');
  if (colon > 0 && (slash < 0 || slash > colon)) {
    const at = text.lastIndexOf('@', colon);
    return {
      kind: 'ssh',
      host: text.slice(at + 1, colon).replace(/^\[|\]$/g, ''),
      path: text.slice(colon + 1).replace(/^\/+/, ''),
      ...(at > 0 ? { user: text.slice(0, at) } : {}),
    };
  }
  return { kind: 'name', name: text };
}

/** The host git pushes to for a forge (the token is sent there and nowhere else): base_url's, else the public one. */
export function forgeGitHost(forge: 'github' | 'gitlab', baseUrl: string | undefined): string {
  if (!baseUrl) return forge === 'github' ? 'github.com' : 'gitlab.com';
  return new URL(baseUrl).host;
}

/** The host name of `host` (without a port; an IPv6 address without brackets). */
function hostName(host: string): string {
  return host.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
}

/** How a remote is reached: its URL, the transport, and (for a forge) whether the token goes with it. */
export type RemoteTransport = { ok: true; via: 'https' | 'ssh' | 'local'; url: string } | { ok: false; error: string };

/**
 * The transport for a remote (a URL or a path: a remote's name is read first). A forge's ssh
 * remote becomes the same repository over https on the forge's host; an ssh remote of another
 * host with a forge is refused (the token goes to the forge's host only).
 */
export function remoteTransport(
  forge: 'github' | 'gitlab' | 'git',
  baseUrl: string | undefined,
  url: string,
): RemoteTransport {
  const a = parseRemote(url);
  switch (a.kind) {
    case 'local':
      return { ok: true, via: 'local', url };
    case 'https':
      if (/^https:\/\/[^/]*@/.test(url))
        return {
          ok: false,
          error:
            'the remote URL holds credentials; give it without them (the token comes from GITHUB_TOKEN/GITLAB_TOKEN)',
        };
      return { ok: true, via: 'https', url };
    case 'ssh': {
      if (forge === 'git') return { ok: true, via: 'ssh', url };
      const host = forgeGitHost(forge, baseUrl);
      if (hostName(host) !== hostName(a.host))
        return {
          ok: false,
          error: `remote ${url} is on ${a.host}, not on ${host}, the ${forge} forge's host: a ${forge} forge pushes over https with its token, so point publish.remote at ${host} (or publish.base_url at this remote's forge), or use forge: git to push over ssh`,
        };
      const path = a.path.replace(/\/+$/, '');
      return { ok: true, via: 'https', url: `https://${host}/${path.endsWith('.git') ? path : `${path}.git`}` };
    }
    case 'name':
      return { ok: false, error: `"${a.name}" is a remote's name, not a URL: its URL is read from the repository` };
    case 'unsupported':
      return {
        ok: false,
        error: `remote ${url}: orchestrate pushes over https://, over ssh (git@host:path or ssh://) or to a local repository (file:// or a path); ${a.scheme}:// is not supported`,
      };
  }
}

/**
 * One sentence for `validate`: how the remote `remote` (the publish block's text, maybe a
 * template) will be reached with `forge`, said before anything runs.
 */
export function transportStatement(
  forge: 'github' | 'gitlab' | 'git',
  baseUrl: string | undefined,
  remote: string,
): string {
  const templated = remote.indexOf('${{');
  const fixed = templated < 0 ? remote : remote.slice(0, templated);
  const tokenHost = forge === 'git' ? undefined : forgeGitHost(forge, baseUrl);
  const https = tokenHost
    ? `https with the ${forge} token (sent to ${tokenHost} only)`
    : 'https without a token (git: credentials are not sent)';
  const ssh = tokenHost
    ? `https with the ${forge} token (the forge's ssh address is pushed over https)`
    : 'ssh with your ssh agent, ~/.ssh/config and known_hosts (GIT_SSH_COMMAND when set)';
  // A template decides the kind only once its fixed start shows it.
  const probe = templated < 0 ? remote : `${fixed}x/y`;
  const a = parseRemote(probe);
  if (templated >= 0 && (!fixed || a.kind === 'name'))
    return `each repository's URL (${remote}), read when publishing: https → ${https}; ssh → ${ssh}; a path → local`;
  // A name resolves to the URL the repository had before the run's agents ran (recorded in the run
  // log), so an agent that rewrites it changes nothing.
  if (a.kind === 'name')
    return tokenHost
      ? `each repository's remote "${a.name}" as it was when the run started: it must lead to ${tokenHost} (https, or its ssh address, pushed over https with the ${forge} token)`
      : `each repository's remote "${a.name}" as it was when the run started: https → ${https}; ssh → ${ssh}; a path → local`;
  if (a.kind === 'local') return 'a local repository (no network)';
  if (a.kind === 'https') return https;
  if (a.kind === 'ssh') {
    if (tokenHost && hostName(tokenHost) !== hostName(a.host))
      return `refused when publishing: ${a.host} is not ${tokenHost}, the ${forge} forge's host (forge: git pushes over ssh)`;
    return ssh;
  }
  return `not supported (${a.scheme}://): orchestrate pushes over https, ssh or to a local path`;
}
