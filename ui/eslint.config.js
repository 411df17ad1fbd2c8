import js from '@eslint/js';
import ts from 'typescript-eslint';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';

export default ts.config(
  { ignores: ['dist/', 'node_modules/', 'src/generated/'] },
  js.configs.recommended,
  ...ts.configs.recommended,
  ...svelte.configs['flat/recommended'],
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
  },
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: { parserOptions: { parser: ts.parser, extraFileExtensions: ['.svelte'] } },
  },
  {
    // Views reach the backend only through the stores and services (lib/stores.ts, lib/services.ts):
    // never Tauri, the backend seam (api.ts) or the fake itself. src/lib/seam.test.ts checks this rule.
    files: ['src/components/**/*.svelte', 'src/App.svelte'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@tauri-apps/*'], message: 'Views call the backend through the stores (lib/stores.ts), never Tauri directly.' },
            { group: ['**/lib/api', '**/lib/api.ts'], message: 'Views call the backend through the stores (lib/stores.ts), never api.ts directly; errors come from lib/errors.ts.' },
            { group: ['**/lib/fake', '**/lib/fake.ts'], message: 'Views call the backend through the stores (lib/stores.ts), never the fake directly.' },
          ],
        },
      ],
    },
  },
);
