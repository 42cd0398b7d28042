import type { MissedPolicy } from './tick-plan';

export interface ScheduleRow {
  trigger_id: string;
  workspace_id: string;
  deployment_id: string;
  expression: string;
  timezone: string;
  missed: MissedPolicy;
  next_due_at: Date | null;
  last_fired_at: Date | null;
  active: boolean;
}
