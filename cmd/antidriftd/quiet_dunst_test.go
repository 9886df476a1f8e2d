package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/dnd"
	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// dunstPaused is `dunstctl is-paused` on k's bus: "true" or "false".
func dunstPaused(t *testing.T, k *desktop) string {
	t.Helper()
	out, err := k.dunst.Ctl(t, "is-paused")
	if err != nil {
		return "error: " + err.Error()
	}
	return strings.TrimSpace(out)
}

func waitPaused(t *testing.T, k *desktop, want string) {
	t.Helper()
	testenv.WaitForValue(t, wait, "dunstctl is-paused", want, func() string { return dunstPaused(t, k) })
}

// Do Not Disturb on dunst: quiet = true pauses dunst while the session
// is active, and only then; the person's value comes back after, also
// after kill -9 of the daemon (the record in the state directory) and of
// dunst (a restarted dunst is paused again).
func TestQuietSessionPausesDunst(t *testing.T) {
	k := startDesktop(t, true, "quiet = true\nidle_after = \"1h\"\n")
	s := k.d.Session(t)
	record := filepath.Join(k.d.StateDir, dnd.RecordFile)
	if got := s.Bool(t, "Quiet"); !got {
		t.Fatal("Quiet in locked with quiet = true: got false, want true")
	}
	waitPaused(t, k, "false")

	startSession(t, s, "write the intro", "intro committed", 3600, "warn", "Editor")
	waitPaused(t, k, "true")
	if st, err := os.Lstat(record); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("%s during the quiet session: %v, mode %v; want a 0600 file", dnd.RecordFile, err, st)
	}
	// Another app's notification is held back by dunst.
	if _, err := k.bus.Run(t, "notify-send", "Chat", "someone wrote"); err != nil {
		t.Fatal(err)
	}
	if got := testenv.WaitFor(t, wait, "dunst to hold the other app's notification", func() string {
		n, _ := k.bus.Run(t, "dunstctl", "count", "waiting")
		return strings.TrimSpace(n)
	}, func(n string) bool { return n != "0" }); got == "0" {
		t.Fatal("unreachable")
	}
	if n, _ := k.bus.Run(t, "dunstctl", "count", "displayed"); strings.TrimSpace(n) != "0" {
		t.Fatalf("dunstctl count displayed during a quiet session: got %s, want 0", n)
	}

	// dunst killed and started again mid-session: paused again.
	k.dunst.Kill9()
	k.dunst.Launch(t)
	waitPaused(t, k, "true")

	// The daemon killed mid-session: dunst stays paused for the session,
	// which the next daemon recovers, quiet still.
	k.d.Kill9(t)
	if _, err := os.Lstat(record); err != nil {
		t.Fatalf("%s after kill -9: %v, want it kept", dnd.RecordFile, err)
	}
	k.d.Start(t)
	waitPaused(t, k, "true")
	if got := s.Bool(t, "Quiet"); !got {
		t.Fatal("Quiet after kill -9 and a restart: got false, want true")
	}

	s.Call(t, "Complete", nil)
	waitPaused(t, k, "false")
	if _, err := os.Lstat(record); !os.IsNotExist(err) {
		t.Fatalf("%s after the session: %v, want it gone", dnd.RecordFile, err)
	}
	var hash string
	s.Call(t, "End", nil, &hash)

	// --no-quiet for one session: dunst is left alone.
	s.Call(t, "SetQuiet", testenv.Args(false))
	startSession(t, s, "read mail", "inbox empty", 3600, "warn", "Editor")
	if got := s.Bool(t, "Quiet"); got {
		t.Fatal("Quiet after SetQuiet(false) and Start: got true, want false")
	}
	waitPaused(t, k, "false")
	completeAndEnd(t, s)

	// The person paused dunst already: it stays paused, and antidrift says so.
	if _, err := k.bus.Run(t, "dunstctl", "set-paused", "true"); err != nil {
		t.Fatal(err)
	}
	startSession(t, s, "write the outro", "outro committed", 3600, "warn", "Editor")
	testenv.WaitFor(t, wait, "QuietNote to say dunst was already paused", func() string { return s.String(t, "QuietNote") },
		func(n string) bool { return strings.Contains(n, "already paused") })
	s.Call(t, "Complete", nil)
	testenv.WaitForProp(t, wait, s, "State", "review")
	waitPaused(t, k, "true")
}

// The daemon killed mid-session, and the session over by the time it
// starts again (it expired meanwhile): dunst is unpaused at start-up,
// from the record.
func TestQuietRecordPutBackAtStart(t *testing.T) {
	k := startDesktop(t, true, "quiet = true\nidle_after = \"1h\"\n")
	s := k.d.Session(t)
	startSession(t, s, "tiny task", "done", 60, "warn", "Editor")
	waitPaused(t, k, "true")
	k.d.Kill9(t)
	// Its session now ends without it: state.json says locked again, as
	// after End, and only the record remembers dunst's value.
	state := filepath.Join(k.d.StateDir, "state.json")
	if err := os.WriteFile(state, []byte(`{"version":1,"state":"locked"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	k.d.Start(t)
	waitPaused(t, k, "false")
	if _, err := os.Lstat(filepath.Join(k.d.StateDir, dnd.RecordFile)); !os.IsNotExist(err) {
		t.Fatalf("%s after it was put back: %v, want it gone", dnd.RecordFile, err)
	}
}

// dunstCount is `dunstctl count <which>` (displayed, waiting, history).
func dunstCount(t *testing.T, k *desktop, which string) string {
	t.Helper()
	out, err := k.dunst.Ctl(t, "count", which)
	if err != nil {
		return "error: " + err.Error()
	}
	return strings.TrimSpace(out)
}

// antidrift's own nudge during a quiet session on a real dunst, once
// per dunst: the host's (Debian 12's 1.9) and Debian 13's (1.12) from the
// trixie rootfs, each subtest named by its dunst --version. dunst 1.10
// and later (pause levels): paused at level 60, so another app's normal
// notification waits while antidrift's critical nudge is displayed.
// dunst 1.9 holds both, and QuietNote says so.
func TestQuietNudgeOnDunst(t *testing.T) {
	for _, c := range []struct {
		version string // what dunst --version says, up to the patch level
		levels  bool   // 1.10 and later
		start   func(testing.TB, *testenv.Bus, *testenv.Display) *testenv.Dunst
	}{
		{"1.9", false, testenv.StartDunst},
		{"1.12", true, testenv.StartRootfsDunst},
	} {
		t.Run("dunst-"+c.version, func(t *testing.T) { quietNudgeOnDunst(t, c.version, c.levels, c.start) })
	}
}

func quietNudgeOnDunst(t *testing.T, version string, levels bool, startDunst func(testing.TB, *testenv.Bus, *testenv.Display) *testenv.Dunst) {
	k := startDesktopWith(t, startDunst, driftConfig+"quiet = true\nidle_after = \"1h\"\n")
	mon := testenv.StartMonitor(t, k.bus, "type='method_call',interface='org.freedesktop.Notifications',member='Notify'")
	if v := k.dunst.Version(t); !strings.Contains(v, " "+version+".") {
		t.Fatalf("dunst --version: got %q, want %s", v, version)
	}
	if _, err := k.dunst.Ctl(t, "get-pause-level"); (err == nil) != levels {
		t.Fatalf("dunstctl get-pause-level: got error %v, want pause levels %v", err, levels)
	}

	s := k.d.Session(t)
	startSession(t, s, "write code", "tests pass", 600, "warn", "Editor")
	waitPaused(t, k, "true")
	if _, err := k.bus.Run(t, "notify-send", "Chat", "someone wrote"); err != nil {
		t.Fatal(err)
	}
	testenv.WaitForValue(t, wait, "dunstctl count waiting (the other app's notification)", "1", func() string { return dunstCount(t, k, "waiting") })

	k.x.Activate(t, k.distraction)
	waitProp(t, k.d, "Drift", "drifting")
	mon.WaitFor(t, "Drifting: Distraction", wait)
	if levels {
		if got, _ := k.dunst.Ctl(t, "get-pause-level"); strings.TrimSpace(got) != "60" {
			t.Fatalf("dunstctl get-pause-level during a quiet session: got %q, want 60", got)
		}
		testenv.WaitForValue(t, wait, "dunstctl count displayed (antidrift's nudge)", "1", func() string { return dunstCount(t, k, "displayed") })
		if got := dunstCount(t, k, "waiting"); got != "1" {
			t.Fatalf("dunstctl count waiting with the nudge shown: got %s, want 1 (the other app's)", got)
		}
		if got := s.String(t, "QuietNote"); got != "" {
			t.Fatalf("QuietNote on a dunst with pause levels: got %q, want none", got)
		}
	} else {
		testenv.WaitForValue(t, wait, "dunstctl count waiting (the other app's and the nudge)", "2", func() string { return dunstCount(t, k, "waiting") })
		if got := dunstCount(t, k, "displayed"); got != "0" {
			t.Fatalf("dunstctl count displayed on dunst 1.9 paused: got %s, want 0", got)
		}
		testenv.WaitFor(t, wait, "QuietNote to say this dunst holds antidrift's nudges", func() string { return s.String(t, "QuietNote") },
			func(n string) bool { return strings.Contains(n, "antidrift's nudges too") })
	}

	s.Call(t, "Complete", nil)
	waitPaused(t, k, "false")
	if levels {
		if got, _ := k.dunst.Ctl(t, "get-pause-level"); strings.TrimSpace(got) != "0" {
			t.Fatalf("dunstctl get-pause-level after the session: got %q, want 0", got)
		}
	}
	if got := s.String(t, "QuietNote"); got != "" {
		t.Fatalf("QuietNote after the session: got %q, want none", got)
	}
}
