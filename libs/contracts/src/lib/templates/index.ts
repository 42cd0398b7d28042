export { TEMPLATE_CATEGORIES, TEMPLATE_SCRIPT_PREFIX, type TemplateCategory, type TemplateDemo, type WorkerTemplate } from './worker-template';
export { WORKER_TEMPLATES, findTemplate, templateScript, templateScriptName } from './template-catalog';
export { TEMPLATE_OVERRIDABLE_FIELDS, instantiateTemplate, type TemplateInstance, type TemplateOverridableField, type TemplateOverrides } from './instantiate-template';
export { promptAsksFor, withoutUnaskedGrants, type RemovedGrant } from './asked-tools';
export { cronFromWords, onDemandOnly } from './schedule-words';
export { DRAFTED_WITHOUT_A_MODEL, draftFromWords, type WordsDraft } from './draft-from-words';
