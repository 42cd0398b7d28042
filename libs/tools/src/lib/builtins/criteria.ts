import { z } from 'zod';

/** Done-criteria: short, checkable statements. */
export const CriteriaSchema = z
  .array(z.string().min(1).max(500))
  .min(1)
  .max(20)
  .describe('Each criterion is one checkable statement of what "done" means.');
