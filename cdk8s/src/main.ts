/** `make chart`: regenerates charts/observatory from the constructs. */
import { CHART_DIR } from './paths.js';
import { writeChart } from './write-chart.js';

writeChart(CHART_DIR);
process.stdout.write(`chart written to ${CHART_DIR}\n`);
