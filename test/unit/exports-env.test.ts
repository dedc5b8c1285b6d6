import { describe, expect, it } from 'vitest';
import { loadExportEnv } from '../../common/config/index.js';

describe('bulk export settings', () => {
  it('defaults to the api executing export runs', () => {
    expect(loadExportEnv({}).executor).toBe('api');
  });

  it('refuses the Job executor, which is not built yet, instead of leaving exports waiting', () => {
    expect(() => loadExportEnv({ GRAPHDOCK_EXPORT_EXECUTOR: 'jobs' })).toThrow(
      /GRAPHDOCK_EXPORT_EXECUTOR=jobs is not built yet/,
    );
  });

  it('refuses a part size below the S3 minimum', () => {
    expect(() => loadExportEnv({ GRAPHDOCK_EXPORT_PART_SIZE: '1024' })).toThrow(
      /GRAPHDOCK_EXPORT_PART_SIZE/,
    );
  });
});
