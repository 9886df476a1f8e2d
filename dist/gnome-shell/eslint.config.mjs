// ESLint for the GNOME Shell extension (make lint). GNOME Shell's own rules
// (gnome-shell's lint/eslintrc-gjs.yml and eslintrc-shell.yml) are not
// published on npm, so these are the rules of theirs (and of ESLint's
// recommended set) that catch bugs rather than style, with the globals GJS
// and the Shell provide. The file imports nothing, so `make lint` needs
// only eslint itself.
export default [
    {
        files: ['**/*.js', '**/*.mjs'],
        languageOptions: {
            ecmaVersion: 2022,
            sourceType: 'module',
            globals: {
                global: 'readonly', log: 'readonly', logError: 'readonly', print: 'readonly',
                printerr: 'readonly', imports: 'readonly', console: 'readonly',
                TextDecoder: 'readonly', TextEncoder: 'readonly',
            },
        },
        rules: {
            'no-undef': 'error',
            'no-unused-vars': ['error', {argsIgnorePattern: '^_'}],
            'no-unreachable': 'error',
            'no-dupe-keys': 'error',
            'no-dupe-class-members': 'error',
            'no-redeclare': 'error',
            'no-const-assign': 'error',
            'no-self-assign': 'error',
            'no-cond-assign': 'error',
            'no-fallthrough': 'error',
            'no-empty': 'error',
            'no-unsafe-finally': 'error',
            'no-unsafe-optional-chaining': 'error',
            'no-async-promise-executor': 'error',
            'no-prototype-builtins': 'error',
            'require-yield': 'error',
            'use-isnan': 'error',
            'valid-typeof': 'error',
            'prefer-const': 'error',
            'no-var': 'error',
            eqeqeq: ['error', 'smart'],
            'no-shadow': 'error',
        },
    },
];
