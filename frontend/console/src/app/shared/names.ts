/** What the console shows in place of ids: names from GET /workspaces/{ws}/directory. Pure, so unit tested. */

export interface DirectoryData {
  workers: Array<{ id: string; name: string }>;
  deployments: Array<{ id: string; workerId: string; workerName: string; version: number; state: string }>;
  users: Array<{ id: string; email: string; role: string }>;
  apiKeys: Array<{ id: string; name: string }>;
}

/** A name to show with the id it stands for (the tooltip and secondary detail). */
export interface Named {
  label: string;
  id: string;
  /** False when no name is known: the label is the id itself. */
  known: boolean;
}

export const EMPTY_DIRECTORY: DirectoryData = { workers: [], deployments: [], users: [], apiKeys: [] };

export class Names {
  private readonly workers: Map<string, string>;
  private readonly deployments: Map<string, DirectoryData['deployments'][number]>;
  private readonly users: Map<string, string>;
  private readonly apiKeys: Map<string, string>;

  constructor(data: DirectoryData = EMPTY_DIRECTORY) {
    this.workers = new Map(data.workers.map((w) => [w.id, w.name]));
    this.deployments = new Map(data.deployments.map((d) => [d.id, d]));
    this.users = new Map(data.users.map((u) => [u.id, u.email]));
    this.apiKeys = new Map(data.apiKeys.map((k) => [k.id, k.name]));
  }

  worker(id: string, fallbackName?: string | null): Named {
    const name = this.workers.get(id) ?? fallbackName ?? null;
    return name ? { label: name, id, known: true } : { label: id, id, known: false };
  }

  /** A deployment reads as its worker and pinned version: "health-report v3". */
  deployment(id: string): Named {
    const found = this.deployments.get(id);
    return found ? { label: `${found.workerName} v${found.version}`, id, known: true } : { label: id, id, known: false };
  }

  /** Who did something: a member by e-mail, an API key by its name, a service or the system by kind. */
  actor(actor: { kind: string; id: string } | null | undefined): Named {
    if (!actor) return { label: 'unknown', id: '', known: false };
    if (actor.kind === 'user') {
      const email = this.users.get(actor.id);
      return email ? { label: email, id: actor.id, known: true } : { label: `user ${actor.id}`, id: actor.id, known: false };
    }
    if (actor.kind === 'api_key') {
      const name = this.apiKeys.get(actor.id);
      return name ? { label: `API key “${name}”`, id: actor.id, known: true } : { label: `API key ${actor.id}`, id: actor.id, known: false };
    }
    return { label: actor.id ? `${actor.kind} ${actor.id}` : actor.kind, id: actor.id, known: true };
  }

  /** A budget scope's owner: the workspace, a worker, a deployment or a run. */
  scopeOwner(kind: string, id: string): Named {
    if (kind === 'worker') return this.worker(id);
    if (kind === 'deployment') return this.deployment(id);
    return { label: id, id, known: false };
  }
}
