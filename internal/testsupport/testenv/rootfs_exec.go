package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Script writes an executable shell script to path that runs argv inside
// the rootfs as uid with exactly env (plus a PATH), its output appended to
// log: for programs something else starts, such as a D-Bus service's Exec=
// (the bus's own environment does not reach it; "$DBUS_STARTER_ADDRESS"
// and other shell expansions in env are expanded when the script runs).
func (r *Rootfs) Script(t testing.TB, path, log string, uid int, env []string, argv ...string) {
	t.Helper()
	name, args := r.command(uid, nil, argv...)
	// env goes before argv, after the fixed environment command adds.
	n := len(args) - len(argv)
	words := []string{quoteShell(name)}
	for _, a := range args[:n] {
		words = append(words, quoteShell(a))
	}
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		words = append(words, k+"="+`"`+v+`"`)
	}
	for _, a := range argv {
		words = append(words, quoteShell(a))
	}
	script := "#!/bin/sh\nexec " + strings.Join(words, " ") + " >>" + quoteShell(log) + " 2>&1\n"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// quoteShell quotes s for sh as one word.
func quoteShell(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
