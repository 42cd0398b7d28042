import type { Routes } from '@angular/router';
import { ComputerPage } from './computer.page';
import { ComputersPage } from './computers.page';

export default [
  { path: '', title: 'Computers · PacketAgent', component: ComputersPage },
  { path: ':name', title: 'Computer · PacketAgent', component: ComputerPage },
] satisfies Routes;
