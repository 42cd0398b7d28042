/** The actor of every event the supervisor appends. */
export const SUPERVISOR_ACTOR = { kind: 'service', id: 'supervisor' } as const;
