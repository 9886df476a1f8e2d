package persist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/antidrift/antidrift/service"
)

// sealSome seals n summaries with a titled bucket each, from start on.
func sealSome(t *testing.T, st *Store, n int, start time.Time) {
	t.Helper()
	for i := 0; i < n; i++ {
		from := start.Add(time.Duration(i) * time.Hour)
		_, err := st.AppendAudit(service.Summary{
			SessionID: "s-" + from.Format("150405"), NextAction: "write", Outcome: service.OutcomeCompleted,
			Enforcement: service.LevelWarn, StartedUnix: from.Unix(), EndedUnix: from.Add(10 * time.Minute).Unix(), TimeboxSecs: 600,
			Buckets: []service.Bucket{{Class: "Emacs", Title: "secret-plan.org", Seconds: 400}, {Class: "Emacs", Title: "notes.org", Seconds: 100}, {Title: service.AwayTitle, Seconds: 100}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func publisherFor(t *testing.T, st *Store, syncDir string, titles bool) *Publisher {
	t.Helper()
	id, problem, err := st.DeviceID()
	if err != nil || problem != "" {
		t.Fatalf("DeviceID: got %v, problem %q; want an id and no problem", err, problem)
	}
	return NewPublisher(st, syncDir, id, "laptop", titles, func(string) {})
}

// publishedStore is a store with n sealed sessions, published into a
// fresh sync_dir (p.syncDir).
func publishedStore(t *testing.T, n int, titles bool) (*Store, *Publisher) {
	t.Helper()
	st := openStore(t, newStateDir(t))
	sealSome(t, st, n, time.Unix(1_800_000_000, 0))
	p := publisherFor(t, st, t.TempDir(), titles)
	if problem := p.PublishNow(); problem != "" {
		t.Fatalf("PublishNow: got problem %q, want none", problem)
	}
	return st, p
}

// Both forms publish, read back as verified copies with the sessions'
// figures, and the totals form carries no window title.
func TestPublishAndReadBack(t *testing.T) {
	for _, titles := range []bool{true, false} {
		st := openStore(t, newStateDir(t))
		sync := t.TempDir()
		sealSome(t, st, 3, time.Unix(1_800_000_000, 0))
		p := publisherFor(t, st, sync, titles)
		if problem := p.PublishNow(); problem != "" {
			t.Fatalf("PublishNow: got problem %q, want none", problem)
		}
		devs, problems, err := ReadShared(sync, LoadTrust(t.TempDir()))
		if err != nil || len(problems) != 0 || len(devs) != 1 {
			t.Fatalf("titles=%v: ReadShared: got %v, problems %v, devices %+v; want one device and no problem", titles, err, problems, devs)
		}
		d := devs[0]
		if !d.OK || d.Name != "laptop" || len(d.Summaries) != 3 || d.Head.Seq != 3 || (d.Summaries[2].Buckets[0].Seconds == 500) == titles {
			t.Fatalf("titles=%v: read back %+v; want laptop OK with 3 summaries to seq 3, titles only if published with them", titles, d)
		}
		file := PublishedTotals
		if titles {
			file = PublishedChain
			if got, want := stripSigs(t, readFile(t, filepath.Join(p.Folder(), file))), readFile(t, st.audit.path); string(got) != string(want) {
				t.Fatalf("the chain copy without its signatures: got %q, want audit.jsonl byte for byte, %q", got, want)
			}
		}
		data := string(readFile(t, filepath.Join(p.Folder(), file)))
		if strings.Contains(data, "secret-plan") != titles {
			t.Fatalf("titles=%v: the copy holding the title: got %v, want %v", titles, strings.Contains(data, "secret-plan"), titles)
		}
		entries, _ := os.ReadDir(p.Folder())
		if len(entries) != 2 {
			t.Fatalf("the folder: got %v, want device.json and %s alone", entries, file)
		}
		assertMode(t, p.Folder(), 0o700)
	}
}

// An edited line is caught by the reader, named with the device and the
// line, and the device left out.
func TestAnEditedCopyIsLeftOut(t *testing.T) {
	_, p := publishedStore(t, 3, false)
	sync := p.syncDir
	path := filepath.Join(p.Folder(), PublishedTotals)
	writeFile(t, path, []byte(strings.Replace(string(readFile(t, path)), `"switch_count":0`, `"switch_count":1`, 1)))
	devs, _, _ := ReadShared(sync, LoadTrust(t.TempDir()))
	if len(devs) != 1 || devs[0].OK || !containsAll(devs[0].Problem, `"laptop"`, "line 1 (seq 1)", "altered", "left out") {
		t.Fatalf("ReadShared: got %+v, want one device, not OK, its problem naming \"laptop\", line 1 (seq 1) altered, left out", devs)
	}
}

// A copy someone else wrote under this device id is never overwritten,
// and the publisher says why; its own copy only ever grows.
func TestPublisherRefusesAnotherWritersCopy(t *testing.T) {
	sync := t.TempDir()
	a := openStore(t, newStateDir(t))
	sealSome(t, a, 2, time.Unix(1_800_000_000, 0))
	pa := publisherFor(t, a, sync, true)
	if problem := pa.PublishNow(); problem != "" {
		t.Fatalf("PublishNow: got problem %q, want none", problem)
	}
	// A second machine with the same device.json and key (a copied state
	// directory).
	bDir := newStateDir(t)
	os.MkdirAll(bDir, 0o700)
	writeFile(t, filepath.Join(bDir, deviceFileName), readFile(t, filepath.Join(a.dir, deviceFileName)))
	writeFile(t, filepath.Join(bDir, deviceKeyFileName), readFile(t, filepath.Join(a.dir, deviceKeyFileName)))
	b := openStore(t, bDir)
	sealSome(t, b, 1, time.Unix(1_900_000_000, 0))
	pb := publisherFor(t, b, sync, true)
	before := readFile(t, filepath.Join(pa.Folder(), PublishedChain))
	if problem := pb.PublishNow(); !containsAll(problem, "another machine publishes under the same device id", "Nothing was overwritten") {
		t.Fatalf("problem: got %q, want another machine publishing under the same device id said, and nothing overwritten", problem)
	}
	if after := readFile(t, filepath.Join(pa.Folder(), PublishedChain)); string(after) != string(before) {
		t.Fatalf("the other machine's copy: got %q, want it unchanged, %q", after, before)
	}
	// Nor by publishing the other form, which would remove its file.
	if problem := publisherFor(t, b, sync, false).PublishNow(); !strings.Contains(problem, "another machine publishes under the same device id") {
		t.Fatalf("the totals form: got problem %q, want another machine publishing under the same device id said", problem)
	}
	if after := readFile(t, filepath.Join(pa.Folder(), PublishedChain)); string(after) != string(before) {
		t.Fatalf("the other machine's copy after the other form: got %q, want it unchanged, %q", after, before)
	}
	sealSome(t, a, 1, time.Unix(1_850_000_000, 0))
	if problem := pa.PublishNow(); problem != "" {
		t.Fatalf("the rightful writer: got problem %q, want none", problem)
	}
}

// A link planted below sync_dir is never written through.
func TestPublisherFollowsNoLink(t *testing.T) {
	st := openStore(t, newStateDir(t))
	sync, elsewhere := t.TempDir(), t.TempDir()
	sealSome(t, st, 1, time.Unix(1_800_000_000, 0))
	if err := os.Symlink(elsewhere, filepath.Join(sync, LayoutFolder)); err != nil {
		t.Fatal(err)
	}
	p := publisherFor(t, st, sync, true)
	if problem := p.PublishNow(); !strings.Contains(problem, "symbolic link") {
		t.Fatalf("problem: got %q, want the symbolic link named", problem)
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("the link's target: got %v written, want nothing", entries)
	}
}

// Folder-level trouble is each named with what to do: a conflict copy, a
// duplicated folder, a later layout.
func TestSharedProblems(t *testing.T) {
	_, p := publishedStore(t, 2, true)
	sync := p.syncDir
	chain := filepath.Join(p.Folder(), PublishedChain)
	writeFile(t, filepath.Join(p.Folder(), "chain.sync-conflict-20261201-101010-ABCDEFG.jsonl"), readFile(t, chain))
	dup := filepath.Join(sync, LayoutFolder, "0192aaaa-0000-7000-8000-000000000000")
	os.Mkdir(dup, 0o700)
	writeFile(t, filepath.Join(dup, PublishedDevice), readFile(t, filepath.Join(p.Folder(), PublishedDevice)))
	writeFile(t, filepath.Join(dup, PublishedChain), readFile(t, chain))
	os.Mkdir(filepath.Join(sync, "antidrift-v3"), 0o700)
	devs, problems, err := ReadShared(sync, LoadTrust(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(problems, "\n")
	if !containsAll(all, "conflict copy", "give one machine a new id", "2 folders claim device id "+p.id, "antidrift-v3", "Update antidrift") {
		t.Fatalf("problems: got\n%s\nwant the conflict copy (2 folders claim device id %s) and antidrift-v3 named, with their fixes", all, p.id)
	}
	good := 0
	for _, d := range devs {
		if d.OK {
			good++
		} else if !strings.Contains(d.Problem, "copied or renamed device folder") {
			t.Errorf("the duplicate's problem: got %q, want a copied or renamed device folder said", d.Problem)
		}
	}
	if good != 1 {
		t.Fatalf("devices counted: got %d, want the one", good)
	}
}

// A copy that ends before the head this machine once read is behind.
func TestBehindTheRememberedHead(t *testing.T) {
	_, p := publishedStore(t, 3, true)
	sync := p.syncDir
	reader := openStore(t, newStateDir(t))
	devs, _, _ := ReadShared(sync, LoadTrust(reader.dir))
	if err := reader.RememberDevices(devs, nil); err != nil {
		t.Fatal(err)
	}
	chain := filepath.Join(p.Folder(), PublishedChain)
	lines := strings.SplitAfter(string(readFile(t, chain)), "\n")
	writeFile(t, chain, []byte(strings.Join(lines[:2], "")))
	devs, _, _ = ReadShared(sync, LoadTrust(reader.dir))
	seen, ok := NewReader(reader.dir).SeenHead(devs[0].ID, devs[0].Form)
	if !ok || seen.Seq != 3 {
		t.Fatalf("SeenHead: got %+v %v, want seq 3 remembered", seen, ok)
	}
	if b, _ := Behind(devs[0], seen); !containsAll(b, "ends at seq 2", "up to seq 3", "truncated") {
		t.Fatalf("Behind: got %q, want it to say the copy ends at seq 2, was seen up to seq 3, truncated", b)
	}
	// A shorter copy must not lower the mark.
	reader.RememberDevices(devs, nil)
	if seen, _ := NewReader(reader.dir).SeenHead(devs[0].ID, devs[0].Form); seen.Seq != 3 {
		t.Fatalf("the mark after a shorter copy: got seq %d, want 3", seen.Seq)
	}
}

// A copy damaged after it was written (an edited line) is repaired by its
// one writer at the next pass, not taken for another machine's.
func TestPublisherRepairsADamagedCopy(t *testing.T) {
	_, p := publishedStore(t, 2, true)
	path := filepath.Join(p.Folder(), PublishedChain)
	good := readFile(t, path)
	writeFile(t, path, []byte(strings.Replace(string(good), "write", "wrote", 1)))
	if problem := p.PublishNow(); !containsAll(problem, "1 line(s) not signed with this machine's key", "replaced with its own record") {
		t.Fatalf("PublishNow: got problem %q, want the line not signed with this machine's key said, and the copy replaced", problem)
	}
	if got := readFile(t, path); string(got) != string(good) {
		t.Fatalf("the damaged copy: got %q, want it repaired to %q", got, good)
	}
}

// sync_dir itself may be a symbolic link (a folder on another disk), for
// the publisher and the reader alike.
func TestSyncDirMayBeALink(t *testing.T) {
	_, p := publishedStore(t, 1, true)
	link := filepath.Join(t.TempDir(), "Sync")
	if err := os.Symlink(p.syncDir, link); err != nil {
		t.Fatal(err)
	}
	devs, problems, err := ReadShared(link, LoadTrust(t.TempDir()))
	if err != nil || len(problems) != 0 || len(devs) != 1 || !devs[0].OK {
		t.Fatalf("ReadShared through a linked sync dir: got %v, problems %v, devices %+v; want one device, OK", err, problems, devs)
	}
}
