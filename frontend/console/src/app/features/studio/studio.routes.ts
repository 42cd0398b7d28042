import type { Routes } from '@angular/router';
import { StudioPage } from './studio.page';
import { TemplatePage } from './template.page';

export default [
  { path: '', title: 'Creation studio · PacketAgent', component: StudioPage },
  { path: 'templates/:templateId', title: 'Template · PacketAgent', component: TemplatePage },
] satisfies Routes;
