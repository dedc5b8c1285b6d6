// A LangGraph `Command` as the API carries it (a run's `command`, a superstep's `command`, the
// protocol's `input.respond`): `goto` names a node or is a Send written as `{node, input}`, alone
// or in a list. The wire form is checked when the request arrives, so a bad shape is a 422 and
// not a run that fails later, and Sends become LangGraph `Send` objects only at execution.
import { Command, Send } from '@langchain/langgraph';
import { z } from 'zod';

const SendInput = z
  .object({ node: z.string().min(1), input: z.unknown().optional() })
  .meta({ id: 'Send' });
const GotoTarget = z.union([z.string().min(1), SendInput], {
  error: 'Expected a node name or a Send ({"node": name, "input": value})',
});

export const CommandGoto = z.union([GotoTarget, z.array(GotoTarget)], {
  error: 'Expected a node name, a Send ({"node": name, "input": value}), or a list of them',
});

export const CommandUpdate = z.union(
  [z.record(z.string(), z.unknown()), z.array(z.tuple([z.string(), z.unknown()]))],
  { error: 'Expected an object of channel updates, or a list of [channel, value] pairs' },
);

export const CommandInput = z
  .object({
    update: CommandUpdate.nullish(),
    resume: z.unknown().optional(),
    goto: CommandGoto.nullish(),
  })
  .meta({ id: 'Command' });
export type CommandInput = z.infer<typeof CommandInput>;

/** The LangGraph `Command` for a command as the API carries it. */
export function toGraphCommand(command: CommandInput): Command {
  const goto = command.goto ?? undefined;
  const targets = goto === undefined ? undefined : Array.isArray(goto) ? goto : [goto];
  return new Command({
    ...(command.update != null ? { update: command.update } : {}),
    ...(command.resume !== undefined ? { resume: command.resume } : {}),
    ...(targets
      ? {
          goto: targets.map((target) =>
            typeof target === 'string' ? target : new Send(target.node, target.input),
          ),
        }
      : {}),
  });
}
