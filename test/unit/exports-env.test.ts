import { describe, expect, it } from 'vitest';
import { loadExportEnv } from '../../common/config/index.js';

describe('bulk export settings', () => {
  it('defaults to the api executing export runs', () => {
    expect(loadExportEnv({}).executor).toBe('api');
  });

  it('accepts the Job executor with the namespace of its BulkExport resources', () => {
    const env = loadExportEnv({
      GRAPHDOCK_EXPORT_EXECUTOR: 'jobs',
      GRAPHDOCK_EXPORT_JOBS_NAMESPACE: 'graphdock',
    });
    expect(env).toMatchObject({ executor: 'jobs', jobsNamespace: 'graphdock' });
    expect(
      loadExportEnv({ GRAPHDOCK_EXPORT_EXECUTOR: 'jobs', POD_NAMESPACE: 'release-ns' })
        .jobsNamespace,
    ).toBe('release-ns');
  });

  it('refuses the Job executor with no namespace to put the BulkExport resources in', () => {
    expect(() => loadExportEnv({ GRAPHDOCK_EXPORT_EXECUTOR: 'jobs' })).toThrow(
      /GRAPHDOCK_EXPORT_EXECUTOR=jobs needs GRAPHDOCK_EXPORT_JOBS_NAMESPACE/,
    );
  });

  it('refuses a part size below the S3 minimum', () => {
    expect(() => loadExportEnv({ GRAPHDOCK_EXPORT_PART_SIZE: '1024' })).toThrow(
      /GRAPHDOCK_EXPORT_PART_SIZE/,
    );
  });
});
