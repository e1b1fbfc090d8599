// ESLint over every TypeScript and JavaScript source of the project (`npm run lint`, run by `npm test`
// beside the type check). Formatting is Prettier's (.prettierrc.json); ESLint keeps the line width for
// what Prettier does not wrap (comments), and typescript-eslint's recommended rules for the rest.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    // generated (see .gitattributes), built, or not ours
    ignores: [
      'node_modules/',
      // landed migrations are frozen, byte for byte
      'sql/',
      'dist/',
      'client/dist.*/',
      '.build/',
      '.tap/',
      '.data/',
      'coverage/',
      'bench/results/',
      'console/build/',
      'client/dist/',
      'client/src/openapi.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // comments and strings Prettier leaves alone; long template literals (SQL, reports) may run on
      'max-len': ['error', { code: 140, ignoreUrls: true, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true }],
      // control characters in patterns are the point where they appear: stripping terminal escape
      // codes from output, refusing control characters in settings
      'no-control-regex': 'off',
      // `_name` marks a parameter kept for its position
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    files: ['console/src/**/*.ts'],
    languageOptions: { globals: { ...globals.browser } },
  },
);
