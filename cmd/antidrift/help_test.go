package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata/help.txt from the commands as they are")

// The help a person reads — `antidrift --help` and every command's own —
// is kept word for word in testdata/help.txt, so moving the commands'
// declarations about (or any refactor) cannot change a synopsis, summary
// or flag text unnoticed. A change meant to be seen is written with
// `go test ./cmd/antidrift -run TestHelpIsAsWritten -update`, and the
// diff of help.txt is what a reviewer reads.
func TestHelpIsAsWritten(t *testing.T) {
	var got bytes.Buffer
	say := func(args ...string) {
		var stdout, stderr bytes.Buffer
		code := run(args, &stdout, &stderr)
		if code != exitOK || stderr.Len() > 0 {
			t.Errorf("antidrift %s: exit %d, stderr %q; want exit 0 and nothing on stderr", strings.Join(args, " "), code, stderr.String())
		}
		got.WriteString("$ antidrift " + strings.Join(args, " ") + "\n")
		got.Write(stdout.Bytes())
		got.WriteString("\n")
	}
	say("--help")
	for _, c := range commands {
		say("help", c.name)
	}
	path := filepath.Join("testdata", "help.txt")
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/antidrift -run TestHelpIsAsWritten -update writes it)", err)
	}
	if line, g, w := testenv.FirstDifference(got.String(), string(want)); line != 0 {
		t.Fatalf("the help differs from %s at line %d:\ngot  %q\nwant %q\n(a change meant to be seen: -run TestHelpIsAsWritten -update rewrites the file)", path, line, g, w)
	}
}

// help --json is JSON, as every command's --json is: the commands, and a
// command's flags, for a script or a shell's completion.
func TestHelpJSONIsJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"help", "--json"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("help --json: exit %d, stderr %q", code, stderr.String())
	}
	var all struct{ Commands []commandHelp }
	if err := json.Unmarshal(stdout.Bytes(), &all); err != nil || len(all.Commands) != len(commands) || all.Commands[0].Name != commands[0].name {
		t.Fatalf("help --json: got %v (%.200q), want JSON naming the %d commands", err, stdout.String(), len(commands))
	}
	stdout.Reset()
	if code := run([]string{"--json", "help", "start"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("--json help start: exit %d, stderr %q", code, stderr.String())
	}
	var start commandHelp
	if err := json.Unmarshal(stdout.Bytes(), &start); err != nil || start.Name != "start" ||
		!slices.ContainsFunc(start.Flags, func(f flagHelp) bool { return f.Name == "for" && f.Value == "DURATION" }) {
		t.Fatalf("--json help start: got %v %+v, want JSON with the flag --for DURATION", err, start)
	}
}
