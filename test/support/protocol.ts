// The thread protocol's HTTP command route, as the protocol tests call it.

/** `POST /threads/{id}/commands` with a command envelope: the HTTP status and the reply. */
export async function postCommand(
  url: string,
  threadId: string,
  command: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}/threads/${threadId}/commands`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(command),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
