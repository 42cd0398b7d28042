// The run's states and terminal events as the services define them, taken from the contracts
// source file itself (it imports nothing, so nothing of Node's reaches the browser bundle).
export {
  isRunState,
  isSuccess,
  isTerminal,
  RUN_STATES,
  runStateAfter,
  type RunState,
} from '../../../../../libs/contracts/src/lib/execution/run-vocabulary';
