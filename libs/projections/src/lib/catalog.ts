import { UnknownProjectionError } from './errors';
import type { Projection } from './projection';
import { attentionProjection } from './projections/attention.projection';
import { budgetUsageProjection } from './projections/budget-usage.projection';
import { deploymentsProjection } from './projections/deployments.projection';
import { runTimelineProjection } from './projections/run-timeline.projection';
import { runsProjection } from './projections/runs.projection';
import { versionsProjection, workersProjection } from './projections/workers.projection';

/** Every projection the projector keeps, in the order it applies them to each event. */
export const PROJECTIONS: readonly Projection[] = [
  workersProjection,
  versionsProjection,
  deploymentsProjection,
  runsProjection,
  runTimelineProjection,
  attentionProjection,
  budgetUsageProjection,
];

export const PROJECTION_NAMES: readonly string[] = PROJECTIONS.map((projection) => projection.name);

export function projectionNamed(name: string): Projection {
  const found = PROJECTIONS.find((projection) => projection.name === name);
  if (!found) throw new UnknownProjectionError(name, PROJECTION_NAMES);
  return found;
}
