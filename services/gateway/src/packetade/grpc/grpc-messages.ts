import type { DeploymentView, EventEnvelope, RunView } from '@packetagent/contracts';

// Plain objects in the shape of packetade.proto's messages (proto-loader, camelCase fields);
// absent values are empty strings, as proto3 has no null.

export function deploymentMessage(deployment: DeploymentView) {
  return {
    id: deployment.id,
    workerId: deployment.workerId,
    workerName: deployment.workerName,
    version: deployment.version,
    digest: deployment.digest,
    effectiveDigest: deployment.effectiveDigest,
    status: deployment.status,
    statusReason: deployment.statusReason ?? '',
    maxConcurrentRuns: deployment.maxConcurrentRuns,
    activeRuns: deployment.activeRuns,
    heldRuns: deployment.heldRuns,
    triggers: deployment.triggers.map((trigger) => ({ triggerId: trigger.triggerId, kind: trigger.kind, json: JSON.stringify(trigger) })),
    createdAt: deployment.createdAt,
    updatedAt: deployment.updatedAt,
    overridesJson: JSON.stringify(deployment.overrides),
  };
}

export function runMessage(run: RunView) {
  return {
    id: run.id,
    deploymentId: run.deploymentId,
    workerId: run.workerId,
    version: run.version,
    digest: run.digest,
    state: run.state,
    hold: run.hold ?? '',
    stopRequested: run.stopRequested,
    pauseRequested: run.pauseRequested,
    source: run.source,
    triggerId: run.triggerId ?? '',
    activationId: run.activationId,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
  };
}

export function feedEventMessage(event: EventEnvelope) {
  return {
    cursor: String(event.globalPosition),
    id: event.id,
    type: event.type,
    stream: event.stream,
    streamVersion: event.streamVersion,
    workspaceId: event.workspaceId,
    occurredAt: event.occurredAt,
    actor: { kind: event.actor.kind, id: event.actor.id },
    dataJson: JSON.stringify(event.data),
    digest: event.digest,
    prevDigest: event.prevDigest ?? '',
    causationId: event.causationId ?? '',
    correlationId: event.correlationId ?? '',
    schemaVersion: event.schemaVersion,
  };
}
