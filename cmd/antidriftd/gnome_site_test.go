package main

import (
	"path/filepath"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

// The GNOME indicator's menu shows the page in front of a browser window
// when its extension's native host reports it (the real host, started by
// a stand-in browser), and nothing for other windows.
func TestGnomeIndicatorShowsTheSite(t *testing.T) {
	testenv.EachRelease(t, testenv.GnomeReleases, testGnomeIndicatorShowsTheSite)
}

func testGnomeIndicatorShowsTheSite(t *testing.T, rel testenv.Release) {
	k := startGnomeDesktop(t, rel)
	g := k.g
	g.OpenWindow(t, firefox.id, "Tabs, not windows #3 — Mozilla Firefox")
	k.startDaemon(t, gnomeConfig)
	gnomeWaitProp(t, k, "CurrentClass", firefox.id)
	site := func() string {
		return g.EvalString(t, indicator+"?._site?.visible ? "+indicator+"._site.label.text : ''")
	}
	if got := site(); got != "" {
		t.Fatalf("the menu's site before any report: got %q, want none", got)
	}
	host := g.StartNativeHost(t, "firefox-esr")
	host.Tab(t, "https://github.com/antidrift/antidrift/pull/3?token=SECRET", "Tabs, not windows #3")
	gnomeWaitProp(t, k, "CurrentSite", "github.com/antidrift/antidrift/pull/3")
	testenv.WaitForValue(t, wait, "the menu's site", "github.com/antidrift/antidrift/pull/3", site)
	g.EvalString(t, indicator+".menu.open(false), ''")
	g.Screenshot(t, filepath.Join(testenv.ArtifactsDir(t), "gnome-menu-site.png"))
	g.EvalString(t, indicator+".menu.close(false), ''")
	g.OpenWindow(t, editor.id, "intro.md — Text Editor")
	testenv.WaitForValue(t, wait, "the menu's site with the browser gone from the front", "", site)
}
