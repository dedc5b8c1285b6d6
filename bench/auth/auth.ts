// The custom auth the bench measures: an `authenticate` that answers at once (the token is the
// user) and one `on` handler that owns and filters threads, as a typical project has.
import { Auth, HTTPException } from '@langchain/langgraph-sdk/auth';

export const auth = new Auth()
  .authenticate((request: Request) => {
    const user = request.headers.get('authorization')?.slice('Bearer '.length);
    if (!user) throw new HTTPException(401);
    return { identity: user, permissions: [] };
  })
  .on('threads', ({ value, user }) => {
    const v = value as { metadata?: Record<string, unknown> | null };
    if (v.metadata) v.metadata.owner = user.identity;
    return { owner: user.identity };
  });
