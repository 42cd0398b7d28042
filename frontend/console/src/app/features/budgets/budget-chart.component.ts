import { ChangeDetectionStrategy, Component, DestroyRef, type ElementRef, effect, inject, input, viewChild } from '@angular/core';
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

export interface BudgetBar {
  label: string;
  spent: number;
  held: number;
  /** Room left under the limit. */
  left: number;
}

/** Stacked bars of spent, held and left per scope, as a share of the limit, so every unit fits one axis. */
@Component({
  selector: 'pa-budget-chart',
  changeDetection: ChangeDetectionStrategy.OnPush,
  styles: `.chart { position: relative; height: 18rem; max-width: 60rem; }`,
  template: `<div class="chart"><canvas #canvas role="img" [attr.aria-label]="description()"></canvas></div>`,
})
export class BudgetChartComponent {
  readonly bars = input.required<BudgetBar[]>();
  readonly description = input('Budget usage per scope');
  private readonly canvas = viewChild.required<ElementRef<HTMLCanvasElement>>('canvas');
  private chart: Chart | null = null;

  constructor() {
    inject(DestroyRef).onDestroy(() => this.chart?.destroy());
    effect(() => {
      const bars = this.bars();
      const data = {
        labels: bars.map((bar) => bar.label),
        datasets: [
          { label: 'spent %', data: bars.map((bar) => bar.spent), backgroundColor: '#0b5cad', stack: 'usage' },
          { label: 'held %', data: bars.map((bar) => bar.held), backgroundColor: '#d4a72c', stack: 'usage' },
          { label: 'left %', data: bars.map((bar) => bar.left), backgroundColor: '#d0d7de', stack: 'usage' },
        ],
      };
      if (this.chart) {
        this.chart.data = data;
        this.chart.update();
        return;
      }
      this.chart = new Chart(this.canvas().nativeElement, {
        type: 'bar',
        data,
        options: {
          indexAxis: 'y',
          animation: false,
          maintainAspectRatio: false,
          responsive: true,
          scales: { x: { stacked: true, min: 0, max: 100, title: { display: true, text: '% of limit' } }, y: { stacked: true } },
        },
      });
    });
  }
}
