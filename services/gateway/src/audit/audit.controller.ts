import { Controller, Get, Inject, Param } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import type { Pool } from 'pg';
import { PayloadStore, PG_POOL, verifyDigestChains } from '@packetagent/eventstore';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { AuditReportDto, EvidenceBundleDto } from './audit.dto';
import { ExportEvidence } from './usecases/export-evidence.usecase';

@ApiTags('audit')
@Controller('api/v1/workspaces/:ws')
export class AuditController {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly payloads: PayloadStore,
    private readonly exportEvidence: ExportEvidence,
  ) {}

  /** Walks every stream of the workspace and recomputes each digest and link, then checks every payload reference against the stored content. */
  @Get('audit/verify')
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: AuditReportDto })
  verify(@Principal() who: WorkspacePrincipal) {
    return verifyDigestChains(this.pool, { workspaceId: who.workspaceId, payloads: this.payloads });
  }

  /**
   * The run's streams, an index of its checkpoints, effects and decisions, and the content of
   * every payload its events reference, sealed by a digest; `packetagent audit verify-bundle`
   * checks it offline.
   */
  @Get('runs/:runId/evidence')
  @RequirePermission('inspect')
  // Documented, not re-serialised: the bundle digest covers the exact content.
  @ApiOkResponse({ type: EvidenceBundleDto })
  evidence(@Principal() who: WorkspacePrincipal, @Param('runId') runId: string) {
    return this.exportEvidence.execute(who.workspaceId, runId);
  }
}
