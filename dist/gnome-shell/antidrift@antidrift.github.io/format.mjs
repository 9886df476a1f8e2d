// Words and numbers as the panels show them (the GNOME indicator imports
// this module, and the Plasma applet an identical copy). The copy is on
// purpose, and a duplicate finder will list it: each panel package stands
// alone, installed as it is (a GNOME extension zip, a Plasma package) with
// every file it loads, so neither may reach into the other's directory or
// load it through a link. dist's TestPanelSourcesAreSelfContained keeps the
// two byte for byte the same: change this one and copy it over the other
// (docs/development.md, "Copies kept on purpose"). Pure functions: the same
// rules as the CLI's `antidrift status` (cmd/antidrift/format.go).

/**
 * Marks a string for translation where it is defined (make pot finds it);
 * each panel translates it where it shows it, in its own domain.
 *
 * @param {string} s the English text
 */
const N_ = s => s;

/**
 * Time left as the panel label shows it: minutes, rounded up, until the last
 * minute, then seconds ("24m", "1h 05m", "45s").
 *
 * @param {number} secs seconds left (clamped at 0)
 */
export function shortLeft(secs) {
    secs = Math.max(0, Math.floor(secs));
    if (secs < 60)
        return `${secs}s`;
    const mins = Math.ceil(secs / 60);
    if (mins < 60)
        return `${mins}m`;
    return `${Math.floor(mins / 60)}h ${String(mins % 60).padStart(2, '0')}m`;
}

/**
 * A duration for a person: "1h 10m", "12m", "40s".
 *
 * @param {number} secs seconds
 */
export function duration(secs) {
    secs = Math.max(0, Math.round(secs));
    const h = Math.floor(secs / 3600), m = Math.floor(secs % 3600 / 60);
    if (h > 0)
        return `${h}h ${m}m`;
    if (m > 0)
        return `${m}m`;
    return `${secs}s`;
}

/**
 * Reads a duration a person typed: "25" (minutes), "90m", "1h30m", "45s",
 * "1h 30m". Returns seconds, or NaN when it is not one.
 *
 * @param {string} text what was typed
 */
export function parseDuration(text) {
    const t = text.trim().toLowerCase().replace(/\s+/g, '');
    if (/^\d+$/.test(t))
        return Number(t) * 60;
    const m = /^(?:(\d+)h)?(?:(\d+)m(?:in)?)?(?:(\d+)s)?$/.exec(t);
    if (!m || t === '')
        return NaN;
    return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
}

/** The words for a Drift value, in English: translate where shown. */
export const driftWords = Object.freeze({
    none: '',
    unknown: N_('Not judged'),
    on_task: N_('On task'),
    drifting: N_('Drifting'),
    away: N_('Away'),
    // away for a break the desktop asked for (GNOME's break reminders)
    break: N_('Break'),
});

/**
 * The words for Drift as the panels show it, in English: translate where
 * shown. While an off-task window's grace runs Drift still reads on_task,
 * and GraceEnds (the unix second it becomes drift) is set: that is no
 * longer on task but leaving it, as `antidrift status` says.
 *
 * @param {string} drift Drift property
 * @param {number} graceEnds GraceEnds property (0 or absent: no grace)
 */
export function driftText(drift, graceEnds) {
    if (drift === 'on_task' && Number(graceEnds ?? 0) !== 0)
        return N_('Leaving the task');
    // (Object.hasOwn is not in Qt's JavaScript engine)
    return Object.prototype.hasOwnProperty.call(driftWords, drift) ? driftWords[drift] : '';
}

/**
 * The panel icon of a state and drift: a glance says where you are.
 *
 * @param {string} state State property
 * @param {string} drift Drift property
 */
export function stateIcon(state, drift) {
    switch (state) {
    case 'locked':
        return 'changes-prevent-symbolic';
    case 'planning':
        return 'document-edit-symbolic';
    case 'review':
        return 'object-select-symbolic';
    case 'active':
        if (drift === 'drifting')
            return 'dialog-warning-symbolic';
        if (drift === 'away' || drift === 'break')
            return 'user-away-symbolic';
        return 'alarm-symbolic';
    }
    return 'action-unavailable-symbolic';
}

// White space as the daemon trims it from an entry (Go's unicode.IsSpace).
const SPACE = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/u;

/**
 * The allowlist entry for a window class as it is, whatever it spells (the
 * daemon's service.LiteralRule): a program names its own class, and a chip
 * offering it must not send "*" (every window) or "a:b" (class a narrowed to
 * titles b). Each of \ * ? [ : is escaped, and white space at either end,
 * which the daemon trims, is written as a set of itself.
 *
 * @param {string} cls a window class
 */
export function literalRule(cls) {
    const chars = [...cls];
    let end = chars.length;
    while (end > 0 && SPACE.test(chars[end - 1]))
        end--;
    return chars.map((c, i) => {
        if ('\\*?[:'.includes(c))
            return `\\${c}`;
        if (SPACE.test(c) && (i === 0 || i >= end))
            return `[${c}]`;
        return c;
    }).join('');
}

/**
 * How many machines a report's sessions ran on: with sync_dir the report
 * names each machine with its part (devices); without it, this one alone.
 * A machine without a session in the report is not counted.
 *
 * @param {object} report the daemon's Report, parsed
 */
export function machinesOf(report) {
    const worked = (report.devices ?? []).filter(d => (d.totals?.sessions ?? 0) > 0);
    return Math.max(1, worked.length);
}

// Characters a label would act on rather than show: the C0 and C1
// controls (a newline breaks a one-line row), and the bidirectional
// controls, which reorder what follows them (a name could make the row
// read backwards).
const ACTING = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
const ACTING_ALL = new RegExp(ACTING.source, 'gu');

/**
 * Text from outside (an app's name from its desktop entry, a class) as one
 * inert line: the acting characters above as a space, at most max
 * characters (an ellipsis says it was cut). Shown as plain text, never as
 * markup: this is the rest of what a label would interpret.
 *
 * @param {string} text the text as the daemon sent it
 * @param {number} max at most this many characters
 */
export function inertLine(text, max = 120) {
    const chars = [...String(text ?? '').replace(ACTING_ALL, ' ')];
    return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : chars.join('');
}

/**
 * What a window is called in the panels: its desktop entry's name, or its
 * class when it has none ("" from the daemon), made inert.
 *
 * @param {string} name CurrentAppName, or a BucketApps name
 * @param {string} cls CurrentClass, or the bucket's class
 */
export function appLabel(name, cls) {
    return inertLine(name || cls || '');
}

/**
 * An app's icon as the daemon names it (its desktop entry's Icon=): a
 * theme icon name, or an absolute path to an image. Anything else (a
 * relative path, a name with a slash or a space, a path going up with
 * "..") is no icon. Returns {name}, {file} or null.
 *
 * @param {string} icon CurrentAppIcon, or a BucketApps icon
 */
export function iconOf(icon) {
    if (typeof icon !== 'string' || icon === '' || icon.length > 4096)
        return null;
    if (icon.startsWith('/'))
        return icon.split('/').includes('..') || ACTING.test(icon) ? null : {file: icon};
    return /^[A-Za-z0-9][A-Za-z0-9._+-]*$/.test(icon) ? {name: icon} : null;
}

/**
 * The same icon as a source a QML Image or Kirigami.Icon takes: the theme
 * name as it is, a file as a file: URL with each part of its path escaped
 * (a "#" or "?" in a file name is part of the name), "" for none.
 *
 * @param {string} icon CurrentAppIcon, or a BucketApps icon
 */
export function iconSource(icon) {
    const i = iconOf(icon);
    if (!i)
        return '';
    return i.name ?? `file://${i.file.split('/').map(encodeURIComponent).join('/')}`;
}

/**
 * The per-window rows' names and icons by class, from BucketApps
 * (class, desktop id, name, icon): each row an array as the bus has it, or
 * an object as `antidrift status --format json` prints it.
 *
 * @param {Array} bucketApps the BucketApps property
 */
export function appsByClass(bucketApps) {
    const by = new Map();
    for (const row of bucketApps ?? []) {
        if (Array.isArray(row) && row.length >= 4)
            by.set(String(row[0]), {id: String(row[1]), name: String(row[2]), icon: String(row[3])});
        else if (row && typeof row === 'object' && typeof row.class === 'string')
            by.set(row.class, {id: String(row.desktop_id ?? ''), name: String(row.name ?? ''), icon: String(row.icon ?? '')});
    }
    return by;
}
