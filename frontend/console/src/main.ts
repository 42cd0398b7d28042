import { bootstrapApplication } from '@angular/platform-browser';
import { AppComponent } from './app/app.component';
import { appConfig } from './app/app.config';

bootstrapApplication(AppComponent, appConfig).catch((error: unknown) => {
  // Nothing else can report a failed start: the page is empty until bootstrap succeeds.
  document.body.textContent = `The console failed to start: ${error instanceof Error ? error.message : String(error)}`;
});
