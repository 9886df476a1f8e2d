package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// leakProbe follows, inside the Shell, every GObject signal handler and
// GLib source an extension makes, which the Shell does not count: it wraps
// GObject.Object.prototype.connect and connect_after, and GLib.timeout_add,
// timeout_add_seconds and idle_add (the extension's ES modules import the
// same objects as imports.gi), and records each call whose stack passes
// through the extension's directory — the Shell's own code working for the
// extension (addToStatusArea, PanelMenu.Button) included.
//
// It holds what it records weakly, so it keeps nothing alive: a handler
// whose object was collected is gone with it. An actor it saw is marked when
// destroyed (touching a disposed actor is an error in the Shell's log), and
// the handlers on it count as gone: dispose disconnects them.
type leakProbe struct{ g *testenv.GnomeShell }

// probeJS installs the probe as globalThis.antidriftLeakProbe.
const probeJS = `(uuid => {
	const {GLib, GObject, Clutter} = imports.gi;
	const dir = Main.extensionManager.lookup(uuid).dir.get_uri() + '/';
	const proto = GObject.Object.prototype;
	const connects = ['connect', 'connect_after'];
	const adds = ['timeout_add', 'timeout_add_seconds', 'idle_add'];
	const originals = {};
	connects.forEach(name => (originals[name] = proto[name]));
	adds.forEach(name => (originals[name] = GLib[name]));
	const probe = {handlers: [], sources: [], destroyed: new WeakSet(), marks: []};
	const marked = new WeakSet();
	// The extension's frame nearest the call: "function@file.js:line".
	const caller = () => {
		const frame = new Error().stack.split('\n').find(f => f.includes(dir));
		return frame?.replace(dir, '').replace(/:\d+$/, '');
	};
	connects.forEach(name => {
		proto[name] = function (signal, ...rest) {
			const id = originals[name].call(this, signal, ...rest);
			const where = caller();
			if (where) {
				if (this instanceof Clutter.Actor && !marked.has(this)) {
					marked.add(this);
					const mark = originals.connect.call(this, 'destroy', actor => probe.destroyed.add(actor));
					probe.marks.push({ref: new WeakRef(this), id: mark});
				}
				probe.handlers.push({ref: new WeakRef(this), id, what: GObject.type_name(this.constructor.$gtype) + ' ' + signal, where});
			}
			return id;
		};
	});
	adds.forEach(name => {
		GLib[name] = function (...args) {
			const id = originals[name].apply(this, args);
			const where = caller();
			if (where)
				probe.sources.push({id, what: name + ' from ' + where.split('@')[0], where});
			return id;
		};
	});
	probe.restore = () => {
		connects.forEach(name => (proto[name] = originals[name]));
		adds.forEach(name => (GLib[name] = originals[name]));
		for (const {ref, id} of probe.marks) {
			const actor = ref.deref();
			if (actor && !probe.destroyed.has(actor))
				actor.disconnect(id);
		}
		delete globalThis.antidriftLeakProbe;
	};
	globalThis.antidriftLeakProbe = probe;
	return 'installed';
})`

// probeReportJS is what the probe saw, counted by kind (object type and
// signal; source function and its caller), and what is still there: a
// handler still connected on a live object, or a source still attached.
const probeReportJS = `(() => {
	const {GLib, GObject} = imports.gi;
	const probe = globalThis.antidriftLeakProbe;
	const context = GLib.MainContext.default();
	const seen = {};
	const count = what => (seen[what] = (seen[what] ?? 0) + 1);
	probe.handlers.forEach(h => count(h.what));
	probe.sources.forEach(s => count(s.what));
	const left = {};
	const leave = what => (left[what] = (left[what] ?? 0) + 1);
	for (const h of probe.handlers) {
		const object = h.ref.deref();
		if (object && !probe.destroyed.has(object) && GObject.signal_handler_is_connected(object, h.id))
			leave('signal handler: ' + h.what + ', connected at ' + h.where);
	}
	for (const s of probe.sources) {
		if (context.find_source_by_id(s.id) !== null)
			leave('GLib source: ' + s.what + ', added at ' + s.where);
	}
	return JSON.stringify({seen, left});
})()`

// installLeakProbe installs the probe for extension uuid.
func installLeakProbe(t *testing.T, g *testenv.GnomeShell, uuid string) *leakProbe {
	t.Helper()
	if got := g.EvalString(t, probeJS+"('"+uuid+"')"); got != "installed" {
		t.Fatalf("the leak probe: got %s, want installed", got)
	}
	return &leakProbe{g}
}

type probeReport struct {
	Seen map[string]int // how many were made, by kind
	Left map[string]int // how many are still connected or attached, by kind and place
}

// String lists what is left, one kind and place a line.
func (r probeReport) String() string {
	lines := make([]string, 0, len(r.Left))
	for what, n := range r.Left {
		lines = append(lines, fmt.Sprintf("%s (%d×)", what, n))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// report collects the garbage first, so objects only the extension held
// are gone, then says what the probe saw and what is left.
func (p *leakProbe) report(t *testing.T) probeReport {
	t.Helper()
	mustEval(t, p.g, "imports.system.gc()")
	var r probeReport
	if err := json.Unmarshal([]byte(p.g.EvalString(t, probeReportJS)), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// checkNothingLeft fails, naming each, when handlers or sources the
// extension made are still there once the garbage has been collected
// (given a while: the Shell drops a JS object's GObject after its own
// collection).
func (p *leakProbe) checkNothingLeft(t *testing.T, when string) probeReport {
	t.Helper()
	var r probeReport
	waitFor(t, wait, when+": every handler and source the extension made gone", func() (bool, string) {
		r = p.report(t)
		return len(r.Left) == 0, "still there:\n" + r.String()
	})
	return r
}

// remove restores the Shell's own functions.
func (p *leakProbe) remove(t *testing.T) {
	t.Helper()
	mustEval(t, p.g, "globalThis.antidriftLeakProbe.restore()")
}
