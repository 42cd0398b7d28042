import { formatUsd } from '../../shared/format';
import type { Drafter } from './studio.api';

export interface DrafterView {
  /** Who drafted it, as the result's heading says it. */
  title: string;
  byModel: boolean;
  facts: Array<{ term: string; detail: string }>;
}

/**
 * Who drafted a definition, said plainly: a model with its provider, structured output and cost,
 * or the builder, which is never presented as a model's work.
 */
export function drafterView(drafter: Drafter): DrafterView {
  switch (drafter.kind) {
    case 'model':
      return {
        title: `Drafted by ${drafter.provider}/${drafter.model}`,
        byModel: true,
        facts: [
          { term: 'Provider', detail: drafter.provider },
          { term: 'Model', detail: drafter.model },
          {
            term: 'Structured output',
            detail: drafter.structuredOutput === 'native' ? 'native: the provider held the answer to the definition schema' : 'in the prompt: the schema was given in the prompt and the answer read from the text',
          },
          { term: 'Cost', detail: `${formatUsd(drafter.costUsd)} (${drafter.usage.inputTokens} input, ${drafter.usage.outputTokens} output tokens)` },
        ],
      };
    case 'builder':
      return {
        title: 'Drafted without a model',
        byModel: false,
        facts: [
          { term: 'Started from', detail: `the ${drafter.template.title} template (${drafter.template.id})` },
          { term: 'Why no model', detail: drafter.reason },
        ],
      };
  }
}
