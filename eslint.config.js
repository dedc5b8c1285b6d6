// Lint rules: type-aware checks for async mistakes, and no deep imports across bounded contexts.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const contexts = ['assistants', 'threads', 'graphs', 'http', 'store', 'config'];

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.graphdock/**',
      '.cache/**',
      'bench/baseline/**',
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
      'no-console': 'error',
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                ...contexts.map((c) => `**/runtime/${c}/*`),
                ...contexts.map((c) => `../${c}/*`),
                '**/common/*/*',
              ],
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
  },
  {
    files: ['bin/**', 'scripts/**', 'bench/**', 'test/**'],
    rules: { 'no-console': 'off' },
  },
);
