// The S3 test server itself (test/support/s3.ts): the identities the bulk-export tests rely on
// are refused exactly what they claim to be refused, and a killed server restarts with its data.
import { DeleteObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { useS3Server } from '../support/s3.js';

const BUCKET = 'identities';

function errorName(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'ok',
    (err: unknown) => (err as { name?: string }).name ?? String(err),
  );
}

const put = (client: S3Client, key: string) =>
  client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'x' }));
const remove = (client: S3Client, key: string) =>
  client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));

describe('S3 test server', () => {
  const s3 = useS3Server({ buckets: [BUCKET] });

  it('gives each identity exactly the rights it is named for', async () => {
    const writer = s3.client(s3.writer);
    const noWrite = s3.client(s3.noWrite);
    const noDelete = s3.client(s3.noDelete);
    const unknown = s3.client(s3.unknown);

    expect(await errorName(put(writer, 'w.txt'))).toBe('ok');
    expect(await errorName(put(noWrite, 'nw.txt'))).toBe('AccessDenied');
    expect(await errorName(put(noDelete, 'nd.txt'))).toBe('ok');
    expect(await errorName(put(unknown, 'u.txt'))).toBe('InvalidAccessKeyId');
    expect(await errorName(remove(noDelete, 'nd.txt'))).toBe('AccessDenied');
    expect(await errorName(remove(writer, 'w.txt'))).toBe('ok');
    expect(await s3.listKeys(BUCKET)).toEqual(['nd.txt']);
    const wrongSecret = s3.client({ ...s3.writer, secret_access_key: 'not-the-secret' });
    expect(await errorName(put(wrongSecret, 'ws.txt'))).toBe('SignatureDoesNotMatch');
  });

  it('restarts on the same endpoint with its objects and users after being killed', async () => {
    await put(s3.client(s3.writer), 'before-kill.txt');
    await s3.kill();
    expect(await errorName(put(s3.client(s3.writer), 'down.txt'))).not.toBe('ok');
    await s3.restart();
    expect(await s3.getText(BUCKET, 'before-kill.txt')).toBe('x');
    expect(await errorName(put(s3.client(s3.noWrite), 'after.txt'))).toBe('AccessDenied');
  });
});
