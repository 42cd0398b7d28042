import { z } from 'zod';
import { createZodDto } from 'nestjs-zod';
import { WorkspaceNameSchema } from '../../../identity/schemas';

export const CreateWorkspaceCommand = z.object({ name: WorkspaceNameSchema });
export type CreateWorkspaceCommand = z.output<typeof CreateWorkspaceCommand>;
export class CreateWorkspaceDto extends createZodDto(CreateWorkspaceCommand) {}

export const CreateWorkspaceResult = z.object({ id: z.string() });
export class CreateWorkspaceResultDto extends createZodDto(CreateWorkspaceResult) {}
