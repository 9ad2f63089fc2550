// What the fake GitLab (fake-forges.ts) knows of CI and review, shaped as GitLab's REST API v4
// shapes it: a merge request's head pipeline (id, sha, status) and its jobs (`scope[]=failed`),
// a job's trace as plain text, diff discussions with their notes (a reply is a note added to the
// discussion), approvals, "requested changes" (detailed_merge_status requested_changes), and
// merge when the pipeline succeeds (PUT .../merge: merged at once when the pipeline succeeded,
// else set and carried out once it does; refused with 405 when it failed or nothing can merge).
import type { ServerResponse } from 'node:http';
import type { FakePull } from './fake-forges.js';

export interface FakeJob {
  name: string;
  status: 'success' | 'failed' | 'running';
  trace: string;
}

interface Pipeline {
  id: number;
  sha: string;
  status: string;
  jobs: (FakeJob & { id: number })[];
}

interface Discussion {
  id: string;
  pull: string;
  notes: { id: number; body: string; author: string; path: string; line: number }[];
}

type Send = (res: ServerResponse, status: number, data: unknown) => void;

const key = (p: FakePull) => `${p.repo}!${p.number}`;

export class GitLabReviewModel {
  readonly pipelines = new Map<string, Pipeline>();
  readonly discussions: Discussion[] = [];
  readonly approvals = new Set<string>();
  readonly changesRequested = new Set<string>();
  readonly autoMerge = new Set<string>();
  private nextId = 500;

  setPipeline(p: FakePull, status: string | null, jobs: FakeJob[] = []): void {
    if (status === null) this.pipelines.delete(key(p));
    else
      this.pipelines.set(key(p), {
        id: this.nextId++,
        sha: p.headSha,
        status,
        jobs: jobs.map((j) => ({ ...j, id: this.nextId++ })),
      });
  }

  discuss(p: FakePull, author: string, path: string, line: number, body: string): string {
    const id = `d${this.nextId++}`;
    this.discussions.push({ id, pull: key(p), notes: [{ id: this.nextId++, body, author, path, line }] });
    return id;
  }

  /** The pipeline of the merge request's head commit (a pipeline of an older head is not the head's). */
  headPipeline(p: FakePull): unknown {
    const pl = this.current(p);
    return pl ? { id: pl.id, sha: pl.sha, status: pl.status } : null;
  }

  private current(p: FakePull): Pipeline | undefined {
    const pl = this.pipelines.get(key(p));
    return pl?.sha === p.headSha ? pl : undefined;
  }

  mergeStatus(p: FakePull): string {
    if (p.state !== 'open') return 'not_open';
    if (this.changesRequested.has(key(p))) return 'requested_changes';
    return 'mergeable';
  }

  /** Merge when the pipeline succeeds, carried out once it has. */
  settle(pulls: FakePull[]): void {
    for (const p of pulls)
      if (p.state === 'open' && this.autoMerge.has(key(p)) && this.current(p)?.status === 'success') {
        p.state = 'closed';
        p.merged = true;
      }
  }

  /** The routes under /projects/:id this model answers; false when `rest` is none of them. */
  handle(
    res: ServerResponse,
    ctx: {
      project: string;
      rest: string;
      query: URLSearchParams;
      method: string;
      body: Record<string, unknown>;
      pull: (n: string) => FakePull | undefined;
      mrJson: (p: FakePull) => unknown;
      send: Send;
    },
  ): boolean {
    const { project, rest, method, body, send } = ctx;
    const done = (status: number, data: unknown): true => {
      send(res, status, data);
      return true;
    };
    let r = /^\/pipelines\/(\d+)\/jobs$/.exec(rest);
    if (r && method === 'GET') {
      const pl = [...this.pipelines.entries()].find(([k, x]) => k.startsWith(`${project}!`) && x.id === Number(r![1]));
      if (!pl) return done(404, { message: '404 Not found' });
      const scopes = ctx.query.getAll('scope[]');
      return done(
        200,
        pl[1].jobs
          .filter((j) => !scopes.length || scopes.includes(j.status))
          .map((j) => ({
            id: j.id,
            name: j.name,
            status: j.status,
            web_url: `https://gitlab.example/${project}/-/jobs/${j.id}`,
            ...(j.status === 'failed' ? { failure_reason: 'script_failure' } : {}),
          })),
      );
    }
    r = /^\/jobs\/(\d+)\/trace$/.exec(rest);
    if (r && method === 'GET') {
      const job = [...this.pipelines.entries()]
        .filter(([k]) => k.startsWith(`${project}!`))
        .flatMap(([, x]) => x.jobs)
        .find((j) => j.id === Number(r![1]));
      if (!job) return done(404, { message: '404 Not found' });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(job.trace);
      return true;
    }
    r = /^\/merge_requests\/(\d+)\/discussions$/.exec(rest);
    if (r && method === 'GET') {
      const p = ctx.pull(r[1]!);
      if (!p) return done(404, { message: '404 Not found' });
      return done(
        200,
        this.discussions
          .filter((d) => d.pull === key(p))
          .map((d) => ({
            id: d.id,
            individual_note: false,
            notes: d.notes.map((n) => ({
              id: n.id,
              type: 'DiffNote',
              body: n.body,
              author: { username: n.author },
              system: false,
              resolvable: true,
              resolved: false,
              position: { new_path: n.path, new_line: n.line, old_path: n.path, old_line: null },
            })),
          })),
      );
    }
    r = /^\/merge_requests\/(\d+)\/discussions\/([^/]+)\/notes$/.exec(rest);
    if (r && method === 'POST') {
      const p = ctx.pull(r[1]!);
      const d = this.discussions.find((x) => p && x.pull === key(p) && x.id === decodeURIComponent(r![2]!));
      if (!p || !d) return done(404, { message: '404 Discussion Not Found' });
      if (typeof body.body !== 'string' || !body.body) return done(400, { error: 'body is missing' });
      const last = d.notes[d.notes.length - 1]!;
      const note = { id: this.nextId++, body: body.body, author: 'orchestrate-bot', path: last.path, line: last.line };
      d.notes.push(note);
      return done(201, { id: note.id, body: note.body, author: { username: note.author } });
    }
    r = /^\/merge_requests\/(\d+)\/merge$/.exec(rest);
    if (r && method === 'PUT') {
      const p = ctx.pull(r[1]!);
      if (!p) return done(404, { message: '404 Not found' });
      if (typeof body.sha === 'string' && body.sha !== p.headSha)
        return done(409, { message: 'SHA does not match HEAD of source branch' });
      const pl = this.current(p);
      if (p.state !== 'open' || p.title.startsWith('Draft: ') || pl?.status === 'failed')
        return done(405, { message: '405 Method Not Allowed' });
      if (body.merge_when_pipeline_succeeds === true && pl && pl.status !== 'success') this.autoMerge.add(key(p));
      else {
        p.state = 'closed';
        p.merged = true;
      }
      return done(200, ctx.mrJson(p));
    }
    return false;
  }

  isAutoMerge(p: FakePull): boolean {
    return this.autoMerge.has(key(p));
  }

  isApproved(p: FakePull): boolean {
    return this.approvals.has(key(p));
  }

  keyOf(p: FakePull): string {
    return key(p);
  }
}
