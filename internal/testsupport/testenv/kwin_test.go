package testenv

import "testing"

// KWin runs headless on the private bus; native windows appear in it with
// their app id, change title and focus on request; KWin killed leaves the
// bus and comes back empty; nothing is left running.
func TestKWinRunsNativeWindows(t *testing.T) {
	EachRelease(t, KWinReleases, testKWinRunsNativeWindows)
}

func testKWinRunsNativeWindows(t *testing.T, rel Release) {
	checkNoLeftovers(t)
	r := NeedKWinRootfs(t, rel)
	k := StartKWin(t, r, StartBus(t))
	a := k.Window(t, "org.example.A", "first")
	b := k.Window(t, "org.example.B", "second")
	if a.ID == b.ID || a.ID == "" {
		t.Fatalf("window ids: got %q and %q, want two different ones", a.ID, b.ID)
	}
	k.Activate(t, a)
	if k.Info(t, b).Active {
		t.Fatal("two windows are active")
	}
	b.SetTitle(t, "second, renamed")
	WaitForValue(t, readyTimeout, "KWin's title of the second window", "second, renamed", func() string { return k.Info(t, b).Title })
	k.Activate(t, b)
	if k.Info(t, a).Active {
		t.Fatal("activation did not move focus away")
	}

	k.Kill(t)
	k.Start(t)
	if ws := k.Windows(t); len(ws) != 0 {
		t.Fatalf("a fresh KWin's windows: got %+v, want none", ws)
	}
}
