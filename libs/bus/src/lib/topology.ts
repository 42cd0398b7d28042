/**
 * Names of every stream, subject root and bucket the bus uses. Production uses the default
 * (empty) prefix; tests pass a unique prefix so suites share one server without seeing each
 * other's messages.
 */
export interface Topology {
  prefix: string;
  eventsStream: string;
  eventsSubjectRoot: string;
  deadLetterStream: string;
  deadLetterSubjectRoot: string;
  commandSubjectRoot: string;
  commandResultsBucket: string;
  /** Workspace-scoped subjects `<root>.<workspace>.<subject>` whose messages wake queue-triggered workers. */
  queueStream: string;
  queueSubjectRoot: string;
}

const PREFIX = /^[a-z][a-z0-9]{0,31}$/;

export function topology(prefix = ''): Topology {
  if (prefix && !PREFIX.test(prefix)) {
    throw new Error(`bus prefix "${prefix}" must match ${PREFIX}`);
  }
  const subject = (root: string) => (prefix ? `${prefix}.${root}` : root);
  const name = (base: string) => (prefix ? `${prefix.toUpperCase()}_${base}` : base);
  return {
    prefix,
    eventsStream: name('PA_EVENTS'),
    eventsSubjectRoot: subject('pa.evt'),
    deadLetterStream: name('PA_DLQ'),
    deadLetterSubjectRoot: subject('pa.dlq'),
    commandSubjectRoot: subject('pa.cmd'),
    commandResultsBucket: name('PA_CMD_RESULTS'),
    queueStream: name('PA_QUEUE'),
    queueSubjectRoot: subject('pa.q'),
  };
}
