import { ChangeDetectionStrategy, Component } from '@angular/core';
import { RouterLink } from '@angular/router';

@Component({
  selector: 'pa-not-found',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [RouterLink],
  template: `
    <h1>Page not found</h1>
    <p>There is no console page at this address, or you have no workspace to show it in.</p>
    <p><a routerLink="/">Go to the start page</a></p>
  `,
})
export class NotFoundPage {}
