// Lint rules: type-aware checks for async mistakes, and no deep imports across bounded contexts.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.graphdock/**',
      '.cache/**',
      'dist/**',
      'bench/baseline/**',
      'bench/baseline-protocol/**',
      'bench/results/**',
      'test/python/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      // fastify plugins and handlers are async by contract even when they do not await.
      '@typescript-eslint/require-await': 'off',
      'no-console': 'error',
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // A sibling context (`../threads/store.js`) or a shared module (`common/db/pool.js`)
              // is reached only through its index.ts.
              regex: '^(\\.\\./(?!\\.\\.)[^/]+|.*/(common|runtime)/[^/]+)/(?!index\\.js$)[^/]+$',
              message: 'Import a bounded context through its index.ts, not its internals.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: 'readonly', console: 'readonly' },
    },
  },
  {
    // Tests and benchmarks reach into test helpers freely; the boundaries guard product code.
    files: ['test/**', 'bench/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['bin/**', 'scripts/**', 'bench/**', 'test/**'],
    rules: { 'no-console': 'off' },
  },
);
