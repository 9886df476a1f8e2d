// Run by dist/format_test.go under gjs: the panels' shared formatting
// rules, as a person reads them. Prints one line per failure; none is a pass.
import * as F from '../gnome-shell/antidrift@antidrift.github.io/format.mjs';

const cases = [
    // The label: minutes rounded up, seconds in the last minute.
    [F.shortLeft(25 * 60), '25m'], [F.shortLeft(24 * 60 + 1), '25m'], [F.shortLeft(60), '1m'],
    [F.shortLeft(59.9), '59s'], [F.shortLeft(20), '20s'], [F.shortLeft(-3), '0s'],
    [F.shortLeft(65 * 60), '1h 05m'],
    [F.duration(3 * 3600 + 10 * 60), '3h 10m'], [F.duration(12 * 60 + 30), '12m'], [F.duration(40), '40s'],
    // What a person types into the start form.
    [F.parseDuration('25'), 1500], [F.parseDuration('90m'), 5400], [F.parseDuration('1h30m'), 5400],
    [F.parseDuration(' 1h 30m '), 5400], [F.parseDuration('45s'), 45], [F.parseDuration('10min'), 600],
    [Number.isNaN(F.parseDuration('soon')), true], [Number.isNaN(F.parseDuration('')), true],
    // The icon says the state at a glance; drift and away are visible.
    [F.stateIcon('locked', 'none'), 'changes-prevent-symbolic'],
    [F.stateIcon('active', 'drifting'), 'dialog-warning-symbolic'],
    [F.stateIcon('active', 'away'), 'user-away-symbolic'],
    [F.stateIcon('active', 'break'), 'user-away-symbolic'],
    // Every Drift value the daemon sends has its words (a break is not 'Away').
    [['unknown', 'on_task', 'drifting', 'away', 'break'].every(d => typeof F.driftWords[d] === 'string' && F.driftWords[d] !== ''), true],
    [F.driftWords.break, 'Break'],
    // A grace (GraceEnds set) is leaving the task, not on it; 0 is no grace.
    [F.driftText('on_task', 1764772200), 'Leaving the task'], [F.driftText('on_task', 0), 'On task'],
    [F.driftText('on_task', undefined), 'On task'], [F.driftText('drifting', 1764772200), 'Drifting'],
    [F.driftText('none', 0), ''], [F.driftText('bogus', 0), ''], [F.driftText('constructor', 0), ''],
    [F.stateIcon('active', 'on_task'), 'alarm-symbolic'],
    [F.stateIcon('', 'none'), 'action-unavailable-symbolic'],
    // Today's machines: those with a session (a report without sync_dir is one).
    [F.machinesOf({totals: {sessions: 2}}), 1],
    [F.machinesOf({devices: [{totals: {sessions: 1}}, {totals: {sessions: 2}}, {totals: {sessions: 0}}]}), 2],
    [F.machinesOf({devices: [{totals: {sessions: 3}}, {ok: false, totals: {sessions: 0}}]}), 1],
    // An app by its name, else its class; inert: no line breaks, no
    // reordering, no endless names.
    [F.appLabel('Firefox', 'firefox-esr'), 'Firefox'], [F.appLabel('', 'firefox-esr'), 'firefox-esr'],
    [F.appLabel('', ''), ''], [F.appLabel('Evil\nname\u202ecod.exe', 'x'), 'Evil name cod.exe'],
    [F.appLabel('<b>bold</b> & co', ''), '<b>bold</b> & co'],
    [[...F.appLabel('a'.repeat(500), '')].length, 120], [F.appLabel('a'.repeat(500), '').endsWith('…'), true],
    // Icons: a theme name, an absolute path, nothing else.
    [JSON.stringify(F.iconOf('org.mozilla.firefox')), '{"name":"org.mozilla.firefox"}'],
    [JSON.stringify(F.iconOf('/opt/app/icon #1.png')), '{"file":"/opt/app/icon #1.png"}'],
    [F.iconOf(''), null], [F.iconOf('../../etc/passwd'), null], [F.iconOf('/usr/share/../../etc/x.png'), null],
    [F.iconOf('icons/app.png'), null], [F.iconOf('a b'), null], [F.iconOf('/tmp/a\nb.png'), null],
    [F.iconOf('/tmp/ok.png') !== null && F.iconOf('/tmp/ok.png') !== null, true], // no regex state between calls
    [F.iconSource('firefox'), 'firefox'], [F.iconSource('/opt/app/icon #1.png'), 'file:///opt/app/icon%20%231.png'],
    [F.iconSource('x/y'), ''],
    [F.appsByClass([['Emacs', 'emacs', 'GNU Emacs', 'emacs'], ['bad']]).get('Emacs').name, 'GNU Emacs'],
    [F.appsByClass([{class: 'Emacs', desktop_id: 'emacs', name: 'GNU Emacs', icon: 'emacs'}]).get('Emacs').icon, 'emacs'],
    [F.appsByClass(undefined).size, 0],
];
cases.forEach(([got, want], i) => {
    if (got !== want)
        print(`case ${i}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
});
