import { afterNextRender, ChangeDetectionStrategy, Component, computed, type ElementRef, effect, inject, Injector, input, linkedSignal, signal, untracked, viewChild } from '@angular/core';
import { FormsModule } from '@angular/forms';
import { RouterLink } from '@angular/router';
import { ApiClient, problemOf } from '../../core/api';
import { Session } from '../../core/session';
import { prettyJson, randomKey } from '../../shared/format';
import type { Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { missingFromRefusal } from './missing-items';
import { ReadinessViewComponent } from './readiness-view.component';
import type { DeploymentCreated, MadeWorker, MissingItem } from './studio.api';
import { parseRunInput } from './typed-input';

/** After a worker is made: its readiness, Deploy (and Deploy anyway when refused), then a first run and a link to follow it. */
@Component({
  selector: 'pa-studio-launch',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [FormsModule, RouterLink, ProblemViewComponent, ReadinessViewComponent],
  template: `
    <section class="panel" aria-labelledby="launch-heading">
      <h2 id="launch-heading" tabindex="-1" #heading>{{ made().summary }}</h2>
      <p>
        Worker <a [routerLink]="['/w', ws(), 'workers', made().workerId]">{{ made().workerName }}</a>, version {{ made().version }}.
      </p>
      <h3>Readiness</h3>
      @if (made().readiness; as readiness) {
        <pa-studio-readiness [readiness]="readiness" intro="To run here, this worker still needs:" />
      } @else {
        <p class="hint">Not checked yet: deploying checks it.</p>
      }

      <h3>Deploy</h3>
      @if (session.can('deploy')) {
        @if (!deployed()) {
          <div class="actions"><button type="button" (click)="deploy(false)" [disabled]="busy()">Deploy</button></div>
        }
        @if (refusal(); as refused) {
          <div class="state error" role="alert" aria-labelledby="refusal-heading">
            <h4 id="refusal-heading" tabindex="-1" #refusalHeading>Deployment refused: this worker cannot run here yet</h4>
            @if (refusalDetail()) { <p>{{ refusalDetail() }}</p> }
            <pa-studio-readiness [missing]="refused" intro="Missing:" />
            <p>Deploy anyway to arm it now; its runs fail where they need what is missing.</p>
            <div class="actions"><button type="button" class="danger" (click)="deploy(true)" [disabled]="busy()">Deploy anyway</button></div>
          </div>
        }
        <pa-problem [problem]="deployProblem()" />
        @if (deployed(); as d) {
          <p role="status" tabindex="-1" #deployedStatus>Deployed version {{ d.version }} as <code>{{ d.id }}</code>@if (d.readiness && !d.readiness.ready) {, missing {{ d.readiness.missing.length }} requirement{{ d.readiness.missing.length === 1 ? '' : 's' }}}.</p>
        }
      } @else {
        <p class="hint">Deploying needs the admin or owner role in this workspace; ask one to deploy {{ made().workerName }}.</p>
      }

      @if (deployed(); as d) {
        <h3>First run</h3>
        @if (session.can('run-control')) {
          <label for="launch-run-input">Run input (JSON)</label>
          <textarea id="launch-run-input" class="code short" spellcheck="false" [ngModel]="runInput()" (ngModelChange)="runInput.set($event)" aria-describedby="launch-run-input-hint"></textarea>
          <p class="hint" id="launch-run-input-hint">{{ made().exampleInput === null ? 'The input the run starts with, as JSON.' : "Prefilled with the template's example input; edit it freely." }}</p>
          <pa-problem [problem]="runProblem()" />
          <div class="actions"><button type="button" (click)="startRun(d.id)" [disabled]="busy()">{{ made().exampleInput === null ? 'Start run' : 'Run with example input' }}</button></div>
          @if (runId(); as id) {
            <p role="status">Run started. <a #runLink [routerLink]="['/w', ws(), 'runs', id]">Follow run {{ id }}</a></p>
          }
        } @else {
          <p class="hint">Starting runs needs the member role or above.</p>
        }
      }
    </section>
  `,
})
export class LaunchComponent {
  private readonly api = inject(ApiClient);
  private readonly injector = inject(Injector);
  protected readonly session = inject(Session);
  readonly made = input.required<MadeWorker>();
  protected readonly ws = this.session.workspaceId;
  private readonly heading = viewChild<ElementRef<HTMLElement>>('heading');
  private readonly refusalHeading = viewChild<ElementRef<HTMLElement>>('refusalHeading');
  private readonly deployedStatus = viewChild<ElementRef<HTMLElement>>('deployedStatus');
  private readonly runLink = viewChild<ElementRef<HTMLElement>>('runLink');

  protected readonly busy = signal(false);
  // Everything below starts over when another worker is made.
  protected readonly deployed = linkedSignal<MadeWorker, DeploymentCreated | null>({ source: this.made, computation: () => null });
  protected readonly refusal = linkedSignal<MadeWorker, MissingItem[] | null>({ source: this.made, computation: () => null });
  protected readonly refusalDetail = linkedSignal<MadeWorker, string>({ source: this.made, computation: () => '' });
  protected readonly deployProblem = linkedSignal<MadeWorker, Problem | null>({ source: this.made, computation: () => null });
  protected readonly runInput = linkedSignal(() => prettyJson(this.made().exampleInput ?? {}));
  protected readonly runProblem = linkedSignal<MadeWorker, Problem | null>({ source: this.made, computation: () => null });
  protected readonly runId = linkedSignal<MadeWorker, string | null>({ source: this.made, computation: () => null });
  private readonly base = computed(() => `/api/v1/workspaces/${this.ws()}`);

  constructor() {
    // Focus goes to the result each time a worker is made, so a keyboard or screen reader user lands on it.
    effect(() => {
      this.made();
      untracked(() => this.focus(this.heading));
    });
  }

  protected async deploy(acceptMissing: boolean): Promise<void> {
    this.busy.set(true);
    this.deployProblem.set(null);
    try {
      const body = { workerId: this.made().workerId, version: this.made().version, ...(acceptMissing ? { acceptMissing: true } : {}) };
      const deployment = await this.api.post<DeploymentCreated>(`${this.base()}/deployments`, body);
      this.refusal.set(null);
      this.deployed.set(deployment);
      this.focus(this.deployedStatus);
    } catch (error) {
      const problem = problemOf(error);
      if (problem.code === 'deployment_not_ready') {
        this.refusal.set(missingFromRefusal(problem.errors));
        this.refusalDetail.set(problem.detail);
        this.focus(this.refusalHeading);
      } else {
        this.deployProblem.set(problem);
      }
    } finally {
      this.busy.set(false);
    }
  }

  protected async startRun(deploymentId: string): Promise<void> {
    this.runProblem.set(null);
    const input = parseRunInput(this.runInput());
    if (!input.ok) {
      this.runProblem.set({ status: 0, title: 'The run was not started', detail: input.message, code: null, errors: [] });
      return;
    }
    this.busy.set(true);
    try {
      const started = await this.api.post<{ runId: string }>(`${this.base()}/deployments/${deploymentId}/runs`, { input: input.value, idempotencyKey: randomKey() });
      this.runId.set(started.runId);
      this.focus(this.runLink);
    } catch (error) {
      this.runProblem.set(problemOf(error));
    } finally {
      this.busy.set(false);
    }
  }

  private focus(target: () => ElementRef<HTMLElement> | undefined): void {
    afterNextRender(() => target()?.nativeElement.focus(), { injector: this.injector });
  }
}
