import js from '@eslint/js';
import ts from 'typescript-eslint';
import svelte from 'eslint-plugin-svelte';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import svelteConfig from './svelte.config.js';

/** The pure core: machine, store, client and sim never touch Svelte, SvelteKit or the DOM. */
const pureCore = [
  'src/lib/machine/**/*.ts',
  'src/lib/store/**/*.ts',
  'src/lib/client/**/*.ts',
  'src/lib/sim/**/*.ts'
];

export default ts.config(
  js.configs.recommended,
  ...ts.configs.recommended,
  ...svelte.configs.recommended,
  prettier,
  ...svelte.configs.prettier,
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }
      ]
    }
  },
  {
    files: ['**/*.svelte', '**/*.svelte.ts', '**/*.svelte.js'],
    languageOptions: {
      parserOptions: {
        projectService: true,
        extraFileExtensions: ['.svelte'],
        parser: ts.parser,
        svelteConfig
      }
    },
    rules: {
      // Server-supplied text must never be rendered as markup.
      'svelte/no-at-html-tags': 'error'
    }
  },
  {
    files: pureCore,
    ignores: ['**/*.spec.ts'],
    languageOptions: { globals: { ...globals['shared-node-browser'] } },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['svelte', 'svelte/*'], message: 'The pure core must not import Svelte.' },
            {
              group: ['$app/*', '@sveltejs/*'],
              message: 'The pure core must not import SvelteKit.'
            },
            {
              group: ['**/ui/*', '**/routes/*'],
              message: 'Dependencies point routes → ui → sim → client → store → machine.'
            }
          ]
        }
      ],
      'no-restricted-globals': [
        'error',
        { name: 'document', message: 'No DOM in the pure core.' },
        { name: 'window', message: 'No DOM in the pure core.' },
        { name: 'localStorage', message: 'Durable state goes through idb-keyval.' },
        { name: 'setTimeout', message: 'Use the virtual clock.' },
        { name: 'setInterval', message: 'Use the virtual clock.' }
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'Use the seeded PRNG.' },
        { object: 'Date', property: 'now', message: 'Use the virtual clock.' }
      ]
    }
  },
  {
    files: ['src/lib/machine/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['svelte', 'svelte/*', '$app/*', '@sveltejs/*'],
              message: 'The pure core must not import Svelte.'
            },
            {
              group: [
                '**/store/*',
                '**/client/*',
                '**/sim/*',
                '**/ui/*',
                '**/handler/*',
                '$lib/store/*',
                '$lib/client/*',
                '$lib/sim/*',
                '$lib/ui/*',
                '$lib/handler/*'
              ],
              message: 'machine imports nothing of ours.'
            }
          ]
        }
      ]
    }
  },
  {
    files: ['src/lib/store/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['svelte', 'svelte/*', '$app/*', '@sveltejs/*'],
              message: 'The pure core must not import Svelte.'
            },
            {
              group: [
                '**/client/*',
                '**/sim/*',
                '**/ui/*',
                '**/routes/*',
                '**/handler/*',
                '$lib/client/*',
                '$lib/sim/*',
                '$lib/ui/*',
                '$lib/handler/*'
              ],
              message: 'store imports machine only.'
            }
          ]
        }
      ]
    }
  },
  {
    // The client host (docs/ARCHITECTURE.md): the layer both the simulation and the shipped
    // handler run. It sees machine and store only; time and IO come through its driver
    // (client/driver.ts). Its specs may drive it with the simulation's clock and provider.
    files: ['src/lib/client/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.testing.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['svelte', 'svelte/*', '$app/*', '@sveltejs/*'],
              message: 'The client host must not import Svelte or SvelteKit.'
            },
            {
              group: [
                '**/sim/*',
                '**/ui/*',
                '**/routes/*',
                '**/handler/*',
                '$lib/sim/*',
                '$lib/ui/*',
                '$lib/handler/*'
              ],
              message:
                'client imports machine and store only: the simulation and the handler drive it (client/driver.ts).'
            }
          ]
        }
      ]
    }
  },
  {
    // The shipped handler: no Svelte, Kit or page code, no simulation, no DOM; real time only in
    // its clock. It runs the client host over machine and store (docs/ARCHITECTURE.md).
    files: ['src/lib/handler/**/*.ts'],
    ignores: ['**/*.spec.ts', '**/*.testing.ts', 'src/lib/handler/clock.ts'],
    languageOptions: { globals: { ...globals['shared-node-browser'] } },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['svelte', 'svelte/*', '$app/*', '@sveltejs/*', '**/ui/*', '**/routes/*'],
              message: 'The handler ships without Svelte, Kit or page code.'
            },
            {
              group: ['**/sim/*', '$lib/sim/*'],
              message:
                'handler imports client, store and machine only: the simulation does not ship.'
            }
          ]
        }
      ],
      'no-restricted-globals': [
        'error',
        { name: 'document', message: 'No DOM in the handler.' },
        { name: 'window', message: 'No DOM in the handler.' },
        { name: 'setTimeout', message: 'Real timers go through handler/clock.ts.' },
        { name: 'setInterval', message: 'Real timers go through handler/clock.ts.' }
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'Real time goes through handler/clock.ts.' }
      ]
    }
  },
  {
    ignores: [
      'build/',
      '.svelte-kit/',
      'node_modules/',
      'test-results/',
      'playwright-report/',
      'out/',
      'bench-out/',
      'dist/'
    ]
  }
);
