// Which members of the API's bodies reach a graph as they are (see `unstorableStrings`): their
// strings may hold anything and are stored encoded; the rest of a body must be storable as is.
// `{}` inside a carried member: checked all the same.
import type { CarriedFields } from './index.js';

/**
 * A command's `goto`: node names end up in text columns; a Send's `input` (`{node, input}`, alone
 * or in a list) reaches the graph.
 */
const CARRIED_GOTO: CarriedFields = { input: true, '*': { input: true } };

/** A LangGraph `Command`. */
export const CARRIED_COMMAND: CarriedFields = { '*': true, goto: CARRIED_GOTO };

/** A run's or assistant's `config`: the checkpoint address in `configurable` is stored as text. */
export const CARRIED_CONFIG: CarriedFields = {
  '*': true,
  configurable: { '*': true, thread_id: {}, checkpoint_id: {}, checkpoint_ns: {} },
};

/** The body of a run (`POST /threads/{id}/runs` and the like). */
export const CARRIED_RUN: CarriedFields = {
  input: true,
  command: CARRIED_COMMAND,
  config: CARRIED_CONFIG,
  context: true,
};

/**
 * A thread protocol command (`POST /threads/{id}/commands`, a WebSocket frame): `run.start`'s
 * input and config, `input.respond`'s responses, update, config and Sends. Interrupt ids and
 * node names are checked.
 */
export const CARRIED_PROTOCOL_COMMAND: CarriedFields = {
  params: {
    input: true,
    config: CARRIED_CONFIG,
    response: true,
    responses: { '*': { response: true } },
    update: true,
    goto: CARRIED_GOTO,
  },
};
