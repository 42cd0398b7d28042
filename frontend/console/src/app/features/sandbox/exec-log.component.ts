import { ChangeDetectionStrategy, Component, afterRenderEffect, computed, effect, inject, input, output, signal, untracked, viewChild, type ElementRef } from '@angular/core';
import { ApiClient, problemOf } from '../../core/api';
import { LiveStream, type LiveStatus } from '../../core/live-stream';
import { BadgeComponent } from '../../shared/badge.component';
import { describeProblem, type Problem } from '../../shared/problem';
import { ProblemViewComponent } from '../../shared/problem-view.component';
import { downloadExecOutput } from './download-output';
import { applyExecEvent, describeEnding, EMPTY_EXEC_LOG, fromResult, type ExecLogState } from './exec-log';
import { execPath, type ExecRecord, type ExecResult, type ExecStream } from './sandbox.api';

/** A call's exec is recorded a moment after the run says it is prepared: a 404 is asked again for this long. */
const NOT_YET_RETRIES = 30;
const RETRY_MS = 1_000;

/**
 * An exec's output: live while it runs (stdout and stderr interleaved as they come, the view
 * following the tail unless the person scrolls up), then how it ended and a download of the
 * whole of each stream. With `live` false it shows the result's previews instead of streaming.
 */
@Component({
  selector: 'pa-exec-log',
  changeDetection: ChangeDetectionStrategy.OnPush,
  imports: [BadgeComponent, ProblemViewComponent],
  styles: `
    .head { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: center; margin: 0.25rem 0; }
    .head label { display: inline-flex; gap: 0.3rem; align-items: center; margin: 0; font-weight: 400; }
    .head input[type='checkbox'] { width: auto; }
    pre.output { white-space: pre-wrap; word-break: break-word; min-height: 2.5rem; max-height: 28rem; }
    .compact pre.output { max-height: 14rem; }
    pre.output .stderr { color: var(--bad); }
    pre.output .note { color: var(--muted); font-style: italic; }
    .actions { margin: 0.25rem 0; }
  `,
  template: `
    <div [class.compact]="compact()" data-testid="exec-log">
      <div class="head">
        <span class="hint" role="status" data-testid="exec-log-status">{{ statusText() }}</span>
        @if (ending(); as end) { <pa-badge [text]="end.text" [kind]="end.tone" data-testid="exec-ending" /> }
        <label><input type="checkbox" [checked]="follow()" (change)="follow.set(!follow())" /> Follow the end</label>
      </div>
      <pre #pane class="output" tabindex="0" [attr.aria-label]="'Output of ' + execId()" (scroll)="onScroll()">@for (s of state().segments; track $index) {<span [class]="s.stream">{{ s.text }}</span>} @empty {<span class="note">{{ state().phase === 'ended' ? '(no output)' : '(no output yet)' }}</span>}</pre>
      @if (state().result; as r) {
        <div class="actions">
          <button type="button" class="secondary" (click)="download(r, 'stdout')" [disabled]="downloading()">Download stdout ({{ r.stdout.bytes }} bytes)</button>
          <button type="button" class="secondary" (click)="download(r, 'stderr')" [disabled]="downloading()">Download stderr ({{ r.stderr.bytes }} bytes)</button>
        </div>
      }
      <pa-problem [problem]="problem()" />
    </div>
  `,
})
export class ExecLogComponent {
  private readonly api = inject(ApiClient);
  readonly workspaceId = input.required<string | null>();
  readonly execId = input.required<string>();
  /** Follow the exec's stream; false shows what its record holds (an ended call). */
  readonly live = input(true);
  readonly compact = input(false);
  /** Emits the result when the exec has ended. */
  readonly ended = output<ExecResult>();

  protected readonly state = signal<ExecLogState>(EMPTY_EXEC_LOG);
  protected readonly follow = signal(true);
  protected readonly liveStatus = signal<LiveStatus | 'loading' | 'waiting'>('loading');
  protected readonly problem = signal<Problem | null>(null);
  protected readonly downloading = signal(false);
  protected readonly ending = computed(() => {
    const result = this.state().result;
    return result ? describeEnding(result) : null;
  });
  protected readonly statusText = computed(() => {
    if (this.state().phase === 'ended') return 'Ended.';
    switch (this.liveStatus()) {
      case 'live':
        return 'Running: output appears as the command writes it.';
      case 'waiting':
        return 'Waiting for the sandbox to start the command…';
      case 'reconnecting':
        return 'Live output interrupted; reconnecting…';
      case 'unavailable':
        return `Live output unavailable${this.problem() ? ` (${describeProblem(this.problem()!)})` : ''}.`;
      case 'closed':
        return 'Live output stopped.';
      default:
        return 'Connecting…';
    }
  });
  private readonly pane = viewChild<ElementRef<HTMLPreElement>>('pane');
  private shown: string | null = null;

  constructor() {
    effect((onCleanup) => {
      const workspaceId = this.workspaceId();
      const execId = this.execId();
      const live = this.live();
      let stopped = false;
      let stream: LiveStream | null = null;
      let retry: ReturnType<typeof setTimeout> | null = null;
      onCleanup(() => {
        stopped = true;
        stream?.stop();
        if (retry) clearTimeout(retry);
      });
      if (this.shown !== `${workspaceId}/${execId}`) {
        this.shown = `${workspaceId}/${execId}`;
        this.state.set(EMPTY_EXEC_LOG);
        this.problem.set(null);
        this.liveStatus.set('loading');
      }
      // An exec followed to its end keeps what was followed, which is more than its previews.
      if (untracked(() => this.state().phase === 'ended')) return;
      if (!live) {
        void this.load(workspaceId, execId);
        return;
      }
      let attempts = 0;
      const open = () => {
        stream = new LiveStream({
          url: `${execPath(workspaceId, execId)}/stream`,
          lastEventId: null,
          onMessage: (message) => {
            let data: unknown;
            try {
              data = JSON.parse(message.data);
            } catch {
              return;
            }
            this.state.update((state) => applyExecEvent(state, message.event, data));
            const result = this.state().result;
            if (message.event === 'ended' && result) {
              stream?.stop();
              this.ended.emit(result);
            }
          },
          onStatus: (status, problem) => {
            if (stopped) return;
            if (status === 'unavailable' && problem?.status === 404 && attempts++ < NOT_YET_RETRIES) {
              this.liveStatus.set('waiting');
              retry = setTimeout(open, RETRY_MS);
              return;
            }
            this.liveStatus.set(status);
            if (problem) this.problem.set(problem);
          },
        });
        stream.start();
      };
      open();
    });

    afterRenderEffect(() => {
      this.state();
      const pane = this.pane()?.nativeElement;
      if (pane && this.follow()) pane.scrollTop = pane.scrollHeight;
    });
  }

  /** Scrolling up stops following the end; scrolling back down to it follows again. */
  protected onScroll(): void {
    const pane = this.pane()?.nativeElement;
    if (!pane) return;
    const atEnd = pane.scrollTop + pane.clientHeight >= pane.scrollHeight - 8;
    if (atEnd !== this.follow()) this.follow.set(atEnd);
  }

  protected async download(result: ExecResult, stream: ExecStream): Promise<void> {
    this.downloading.set(true);
    this.problem.set(null);
    try {
      await downloadExecOutput(this.workspaceId(), result, stream);
    } catch (error) {
      this.problem.set(problemOf(error));
    } finally {
      this.downloading.set(false);
    }
  }

  private async load(workspaceId: string | null, execId: string): Promise<void> {
    try {
      const record = await this.api.get<ExecRecord>(execPath(workspaceId, execId));
      if (record.result) {
        this.state.set(fromResult(record.result, record.argv));
        this.ended.emit(record.result);
      } else {
        this.state.set({ ...EMPTY_EXEC_LOG, phase: 'running', argv: record.argv, driver: record.driver });
        this.liveStatus.set('closed');
      }
    } catch (error) {
      this.problem.set(problemOf(error));
      this.liveStatus.set('unavailable');
    }
  }
}
