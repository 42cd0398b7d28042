import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { EVENT_REGISTRY } from '@packetagent/bus';
import type { EventRegistry } from '@packetagent/contracts';
import { PG_POOL } from '@packetagent/eventstore';
import { catchUpFromStore, PROJECTIONS, ProjectionOutOfOrderError, ProjectionWriter, type ApplyOutcome, type Decoded } from '@packetagent/projections';
import { PROJECTOR_OPTIONS, type ResolvedProjectorOptions } from '../../../projector.options';

export type ProjectOutcome = { kind: 'event'; outcomes: Record<string, ApplyOutcome>; caughtUp: number } | { kind: 'gap'; outcome: 'recorded' | 'duplicate' };

/**
 * Applies one delivery to every projection. A delivery the projections refuse as out of order
 * means the stream skipped an event (lost and republished later, or aged out): the missed
 * events are read from the store, which is exact below a position the relay has published,
 * and then the delivery applies.
 */
@Injectable()
export class ProjectEvent {
  readonly writer: ProjectionWriter;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_REGISTRY) private readonly registry: EventRegistry,
    @Inject(PROJECTOR_OPTIONS) private readonly options: ResolvedProjectorOptions,
  ) {
    this.writer = new ProjectionWriter(pool, PROJECTIONS);
  }

  async execute(decoded: Decoded): Promise<ProjectOutcome> {
    if (decoded.kind === 'gap') {
      this.options.log('warn', 'event recorded as a projection gap', { ...decoded.gap });
      return { kind: 'gap', outcome: await this.writer.recordGap(decoded.gap) };
    }
    try {
      return { kind: 'event', outcomes: await this.writer.apply(decoded.event), caughtUp: 0 };
    } catch (error) {
      if (!(error instanceof ProjectionOutOfOrderError)) throw error;
      this.options.log('warn', 'delivery skipped ahead of the projections; reading the missed events from the store', {
        projection: error.projection,
        applied: error.appliedPosition,
        missing: error.missingPosition,
        position: error.eventPosition,
      });
      const caughtUp = await catchUpFromStore(this.pool, this.registry, this.writer, decoded.event.globalPosition - 1);
      return { kind: 'event', outcomes: await this.writer.apply(decoded.event), caughtUp: caughtUp.applied + caughtUp.gaps };
    }
  }
}
