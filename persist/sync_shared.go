package persist

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/antidrift/antidrift/service"
)

// SharedDevice is one device's folder in sync_dir as a reader found it.
// Its summaries count only when OK: a copy that does not verify is named
// (Problem) and left out, never merged.
type SharedDevice struct {
	Folder        string // the folder's name
	ID            string // device.json's device_id ("" when unreadable)
	Name          string // device.json's device_name, the label reports show
	Form          string // "chain" (with titles) or "totals"
	PublishedUnix int64
	Entries       uint32            // lines that verify, signed, before the first that does not
	Head          service.AuditHead // the last line that counts (Summaries' last)
	OK            bool              // every line counts: nothing was left out
	Problem       string            // what was left out and why: the device, the file, the line, what to do
	// Summaries are the lines that count: signed by the device's key (its
	// pinned key, or this machine's own for its own folder) and chaining,
	// up to the first break. A line not signed by that key is left out
	// wherever it is, and the chain is checked over the rest, so a forged
	// line costs nothing of the device's real record.
	Summaries []service.Summary
	// Key is the fingerprint of the key the folder is held to; Pinned says,
	// the first time this machine reads the folder, that its key was
	// pinned now ("" every other time).
	Key    string
	Pinned string
	// Stamp is what the folder's files were when read; Unchanged says the
	// folder was not read again, its stamp being the one the caller gave
	// (ReadOptions.Unchanged).
	Stamp     Stamp
	Unchanged bool
}

// Label names the device for a person: its name, else its id.
func (d SharedDevice) Label() string {
	if d.Name != "" {
		return d.Name
	}
	if d.ID != "" {
		return d.ID
	}
	return d.Folder
}

// ReadShared reads every device folder under <syncDir>/antidrift-v2,
// each verified on its own against the key trust holds it to, never
// through a symbolic link. problems are what is wrong beside any one
// device's chain: an earlier or later layout, a folder that is no
// device's, two folders claiming one device id, a Syncthing conflict copy;
// each says what to do. A sync_dir holding no layout folder yet reads as
// no devices.
func ReadShared(syncDir string, trust *Trust) (devices []SharedDevice, problems []string, err error) {
	return ReadSharedWith(syncDir, trust, ReadOptions{})
}

// ReadOptions say how ReadSharedWith reads sync_dir.
type ReadOptions struct {
	// Bounds are the read's bounds; the zero value is DefaultReadBounds.
	Bounds ReadBounds
	// Unchanged has, for each device folder, its Stamp at the last read:
	// a folder whose files still have it is not read again, and comes
	// back with Unchanged set and nothing else but its Folder and Stamp.
	Unchanged map[string]Stamp
}

// ReadSharedWith is ReadShared within o's bounds (sync_bounds.go): it reads at
// most o.Bounds.Devices device folders (the ones this machine knows
// first), and of each at most its share of bytes and signature checks,
// streaming the chain file, and names in problems and in each device's
// Problem what it left out.
func ReadSharedWith(syncDir string, trust *Trust, o ReadOptions) (devices []SharedDevice, problems []string, err error) {
	if o.Bounds == (ReadBounds{}) {
		o.Bounds = DefaultReadBounds
	}
	budget := newReadBudget(o.Bounds)
	if trust.Problem != "" {
		problems = append(problems, trust.Problem)
	}
	// sync_dir itself is the person's choice and may be a link, as the
	// state directory's own path may; nothing below it is followed.
	root, err := os.Open(syncDir)
	if err == nil {
		if info, serr := root.Stat(); serr != nil || !info.IsDir() {
			root.Close()
			root, err = nil, fmt.Errorf("%s is not a directory", syncDir)
		}
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, append(problems, fmt.Sprintf("sync_dir %s does not exist: no other machine's record is read. Create it as the folder Syncthing shares (docs/sync.md)", syncDir)), nil
		}
		return nil, nil, fmt.Errorf("cannot read sync_dir: %w", err)
	}
	defer root.Close()
	names, _, err := readNames(root, o.Bounds.Listed)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read sync_dir: %w", err)
	}
	for _, n := range names {
		if n == unsignedLayout {
			if p := unsignedLayoutProblem(root); p != "" {
				problems = append(problems, p)
			}
		} else if strings.HasPrefix(n, "antidrift-v") && n != LayoutFolder {
			problems = append(problems, fmt.Sprintf("sync_dir holds %s, a layout a later antidrift writes; this one reads only %s, so the devices there are not shown. Update antidrift on this machine", shownName(n), LayoutFolder))
		}
	}
	layout, err := openIn(root, LayoutFolder, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, problems, nil
	}
	if errors.Is(err, errSymlink) || errors.Is(err, unix.ENOTDIR) {
		// Planted there (only antidrift writes it): said, not followed,
		// and made again by the next machine that publishes.
		return nil, append(problems, fmt.Sprintf("%s in sync_dir is not a folder (%s), so no machine's record in it is read: something other than antidrift wrote it. The next machine to publish removes it and makes the folder again (docs/sync.md)",
			LayoutFolder, errors.Unwrap(err))), nil
	}
	if err != nil {
		return nil, problems, fmt.Errorf("cannot read %s: %w", filepath.Join(syncDir, LayoutFolder), err)
	}
	defer layout.Close()
	listed, moreListed, err := readNames(layout, o.Bounds.Listed)
	if err != nil {
		return nil, problems, err
	}
	var folders, odd, conflicts []string
	for _, folder := range listed {
		if strings.HasPrefix(folder, ".") {
			continue // Syncthing's own (.stfolder) and temp files
		}
		if strings.Contains(folder, ".sync-conflict-") {
			conflicts = append(conflicts, shownName(folder))
			continue
		}
		if shownName(folder) != folder {
			odd = append(odd, shownName(folder))
			continue
		}
		folders = append(folders, folder)
	}
	switch {
	case len(conflicts) == 1:
		problems = append(problems, fmt.Sprintf("%s/%s is a Syncthing conflict copy of a device folder; it is not read. Delete it once the folder it copies is right", LayoutFolder, conflicts[0]))
	case len(conflicts) > 1:
		problems = append(problems, fmt.Sprintf("%s holds %d folders named as a Syncthing conflict copy of a device folder (%s); they are not read. Delete them once the folders they copy are right", LayoutFolder, len(conflicts), namedFew(conflicts)))
	}
	if len(odd) > 0 {
		problems = append(problems, fmt.Sprintf("%s holds %d folder(s) named with characters no device id has (%s); they are no device's, and are not read. Delete them", LayoutFolder, len(odd), namedFew(odd)))
	}
	seen := readSeen(trust.dir)
	folders, left := orderFolders(folders, trust, seen, o.Bounds.Devices)
	budget.share(len(folders))
	if p := leftOutFolders(left, o.Bounds.Devices, moreListed); p != "" {
		problems = append(problems, p)
	}
	for _, folder := range folders {
		dir, err := openIn(layout, folder, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s/%s cannot be read (%v); it is not read", LayoutFolder, folder, err))
			continue
		}
		d, more := readDeviceDir(dir, folder, trust, budget, seen, o.Unchanged)
		dir.Close()
		problems = append(problems, more...)
		devices = append(devices, d)
	}
	return devices, append(problems, duplicateClaims(devices)...), nil
}

// readDeviceDir reads one device folder: device.json, the chain file it
// names (streamed, within budget), and notes every conflict copy Syncthing
// left beside them.
func readDeviceDir(dir *os.File, folder string, trust *Trust, budget *readBudget, seen seenFile, unchanged map[string]Stamp) (SharedDevice, []string) {
	var problems []string
	names, _, _ := readNames(dir, budget.b.Listed)
	var conflicts []string
	for _, n := range names {
		if strings.Contains(n, ".sync-conflict-") {
			conflicts = append(conflicts, shownName(n))
		}
	}
	switch {
	case len(conflicts) == 1:
		problems = append(problems, fmt.Sprintf("%s/%s/%s is a Syncthing conflict copy: two machines wrote this device's folder, which only happens when they share one device id (a copied state directory). It is not read. "+
			"Fix: give one machine a new id (stop antidriftd there, move device.json out of its state directory, start it), then delete the conflict copy",
			LayoutFolder, folder, conflicts[0]))
	case len(conflicts) > 1:
		// Said once for the folder, however many a machine gone bad made.
		problems = append(problems, fmt.Sprintf("%s/%s holds %d files named as a Syncthing conflict copy (%s): two machines wrote this device's folder, which only happens when they share one device id (a copied state directory), or something else wrote them. They are not read. "+
			"Fix: give one machine a new id (stop antidriftd there, move device.json out of its state directory, start it), then delete the conflict copies",
			LayoutFolder, folder, len(conflicts), namedFew(conflicts)))
	}
	metaFile, err := openIn(dir, PublishedDevice, os.O_RDONLY, 0)
	var meta []byte
	if err == nil {
		meta, err = io.ReadAll(io.LimitReader(metaFile, maxDeviceFile+1))
		if err == nil && len(meta) > maxDeviceFile {
			err = fmt.Errorf("it is larger than %d KiB", maxDeviceFile>>10)
		}
		defer metaFile.Close()
	}
	if err != nil {
		return SharedDevice{Folder: folder, Problem: fmt.Sprintf("device folder %s: %s cannot be read (%v); it is left out. If the device publishes again, Syncthing brings it", folder, PublishedDevice, err)}, problems
	}
	var d publishedDevice
	var chain *os.File
	if json.Unmarshal(meta, &d) == nil && (d.File == PublishedChain || d.File == PublishedTotals) {
		if chain, err = openIn(dir, d.File, os.O_RDONLY, 0); err != nil {
			return SharedDevice{Folder: folder, ID: d.DeviceID, Name: cleanLabel(d.DeviceName),
				Problem: fmt.Sprintf("device %s: %s cannot be read (%v); it is left out", service.Quote(cleanLabel(d.DeviceName)), d.File, err)}, problems
		}
		defer chain.Close()
	}
	stamp := Stamp{Meta: stampOf(metaFile), Chain: stampOf(chain)}
	if was, ok := unchanged[folder]; ok && was == stamp && stamp.Chain != (fileStamp{}) {
		return SharedDevice{Folder: folder, Stamp: stamp, Unchanged: true}, problems
	}
	var src chainSource
	if chain != nil {
		src = fileSource(chain, budget)
	}
	dev := readDeviceFolder(folder, meta, src, trust, budget.forDevice(), seen)
	dev.Stamp = stamp
	return dev, problems
}

// chainSource is a device's chain file to walk, within the read's bounds:
// open gives it from its start each time (a walk by hash alone that fails
// is walked again in whole), cut says whether the bounds left part of it
// out, and done tells the budget how much was read.
type chainSource struct {
	open func() io.Reader
	cut  func() (leftBytes int64)
	size func() int64
	done func()
}

// fileSource reads f from its start, at most the device's share of bytes
// and what is left of the total.
func fileSource(f *os.File, budget *readBudget) chainSource {
	limit := min(budget.deviceBytes, budget.bytes)
	size := fileSize(f)
	var cr *countingReader
	return chainSource{
		open: func() io.Reader {
			if cr != nil {
				budget.bytes -= cr.n
			}
			limit = min(limit, budget.bytes)
			cr = &countingReader{r: io.LimitReader(io.NewSectionReader(f, 0, max(size, 0)), max(limit, 0))}
			return cr
		},
		cut: func() int64 {
			if size > limit {
				return size - limit
			}
			return 0
		},
		size: func() int64 { return min(max(size, 0), limit) },
		done: func() {
			if cr != nil {
				budget.bytes -= cr.n
				cr = nil
			}
		},
	}
}

// bytesSource is a chain held in memory (the fuzz test's), unbounded.
func bytesSource(chain []byte) chainSource {
	return chainSource{
		open: func() io.Reader { return bytes.NewReader(chain) },
		cut:  func() int64 { return 0 },
		size: func() int64 { return int64(len(chain)) },
		done: func() {},
	}
}

// unsignedLayoutProblem names the device folders of layout 1 left in
// sync_dir: machines that still run an antidrift without signatures
// (each machine removes its own once it publishes in layout 2).
func unsignedLayoutProblem(root *os.File) string {
	dir, err := openIn(root, unsignedLayout, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return ""
	}
	defer dir.Close()
	names, _ := dir.Readdirnames(-1)
	n := 0
	for _, name := range names {
		if !strings.HasPrefix(name, ".") {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("sync_dir holds %s with %d device folder(s) in layout 1, which an earlier antidrift writes without signatures: nothing in them can be held to a machine's key, so they are not read. "+
		"Update antidrift on those machines: each then publishes in %s and removes its folder from %s", unsignedLayout, n, LayoutFolder, unsignedLayout)
}

// ReadDeviceFolder judges one device folder from its device.json and its
// chain file's bytes, against the key trust holds the device to: it never
// fails, it says what is wrong in Problem. (It is the layout's whole
// reader of bytes, and what the fuzz test feeds.)
func ReadDeviceFolder(folder string, meta, chain []byte, trust *Trust) SharedDevice {
	return readDeviceFolder(folder, meta, bytesSource(chain), trust, nil, seenFile{})
}

// readDeviceFolder is ReadDeviceFolder reading the chain from src, taking
// its signature checks from checks (nil: unbounded); lines up to the head
// seen remembers for the device are checked by their hashes alone.
func readDeviceFolder(folder string, meta []byte, src chainSource, trust *Trust, checks *deviceChecks, seen seenFile) SharedDevice {
	if src.open == nil {
		src = bytesSource(nil)
	}
	defer src.done()
	d := SharedDevice{Folder: folder}
	var m publishedDevice
	if err := json.Unmarshal(meta, &m); err != nil {
		d.Problem = fmt.Sprintf("device folder %s: %s is not valid JSON; it is left out", folder, PublishedDevice)
		return d
	}
	d.ID, d.Name, d.Form, d.PublishedUnix = m.DeviceID, cleanLabel(m.DeviceName), m.Form, m.PublishedUnix
	who := fmt.Sprintf("device %s (%s)", service.Quote(d.Label()), folder)
	switch {
	case m.Layout != LayoutVersion:
		d.Problem = fmt.Sprintf("%s was published in layout %d, which this antidrift cannot read (it reads layout %d); it is left out. Update antidrift on this machine", who, m.Layout, LayoutVersion)
		return d
	case !IsDeviceID(m.DeviceID):
		d.Problem = fmt.Sprintf("%s: %s names no valid device id; it is left out", who, PublishedDevice)
		return d
	case m.DeviceID != folder:
		d.Problem = fmt.Sprintf("folder %s/%s claims device id %s, which is not its own name: a copied or renamed device folder. It is left out; delete it (the device publishes in %s/%s)",
			LayoutFolder, folder, m.DeviceID, LayoutFolder, m.DeviceID)
		return d
	case (m.Form == formChain) != (m.File == PublishedChain) || (m.Form != formChain && m.Form != formTotals):
		d.Problem = fmt.Sprintf("%s: %s names form %s and file %s, which do not go together; it is left out", who, PublishedDevice, service.Quote(m.Form), service.Quote(m.File))
		return d
	}
	carried, err := base64.StdEncoding.DecodeString(m.PublicKey)
	if err != nil || len(carried) != ed25519.PublicKeySize || !deviceFileSignedBy(carried, meta) {
		d.Problem = fmt.Sprintf("%s: its %s is not signed by the key it names (it was altered in sync_dir, or written by no antidrift); it is left out. If the device publishes again, its own copy replaces it", who, PublishedDevice)
		return d
	}
	want, mismatch, pinned := trust.keyFor(m.DeviceID, carried)
	if pinned != "" {
		d.Pinned = who + ": " + pinned
	}
	if want != nil {
		d.Key = Fingerprint(want)
	}
	if mismatch != "" {
		d.Problem = fmt.Sprintf("%s: %s. Its copy is left out of every figure", who, mismatch)
		return d
	}
	walked := checkSignedChainBounded(src, want, m.DeviceID, m.Form, checks, seen.Heads[seenKey(m.DeviceID, m.Form)])
	d.Problem, d.Entries, d.Summaries, d.Head = judgeSignedChain(who, m.File, walked.signedChain)
	if left := boundsProblem(who, m.File, walked); left != "" {
		d.Problem = strings.TrimPrefix(d.Problem+". "+left, ". ")
	}
	if m.Form == formTotals && !m.SourceOK {
		d.Problem = fmt.Sprintf("%s: the machine's own audit.jsonl does not verify (%s), so its totals copy is left out. Run antidrift verify on that machine",
			who, service.Quote(m.SourceProblem))
		d.Entries, d.Summaries, d.Head = 0, nil, service.AuditHead{}
	}
	d.OK = d.Problem == ""
	return d
}

// signedChain is a device's chain file walked line by line: each line's
// signature checked against the device's key, and the hash chain walked
// over the lines that are signed.
type signedChain struct {
	lines         int
	unsigned      int      // lines not signed by the key
	firstUnsigned string   // "line 3 (seq 3)"
	namedUnsigned []string // the first few of them
	chain         service.AuditReport
	summaries     []service.Summary // the signed lines that chain, to the first break
}

// signedVerdict is what one published line says of itself (signedLineCheck).
type signedVerdict struct {
	lineVerdict
	signed bool
	seq    uint64 // as the line carries it, to name it; 0 when unreadable
	sum    service.Summary
	parsed bool
}

// newSignedLineCheck checks published lines one at a time, each on its
// own, so lines can be checked on several cores (eachLineInParallel) and
// streamed: the signature against pub, then the hash rule on the sealed
// line within.
func newSignedLineCheck(pub ed25519.PublicKey, id, form string) func() func(line []byte, complete bool) signedVerdict {
	return func() func(line []byte, complete bool) signedVerdict {
		check := newLineCheck()
		return func(line []byte, complete bool) signedVerdict {
			var sealed []byte
			ok := false
			if complete {
				sealed, ok = signedBy(pub, id, form, line)
			}
			if !ok {
				var k auditKeys
				if complete && decodeAuditKeys(line, &k) != nil {
					k.Seq = 0
				}
				return signedVerdict{seq: k.Seq}
			}
			v := signedVerdict{signed: true, lineVerdict: check(sealed, true), seq: 0}
			if v.unreadable == "" && v.unsealed == "" {
				v.parsed = json.Unmarshal(sealed, &v.sum) == nil
			}
			return v
		}
	}
}

// checkSignedChain walks a device's published chain file, held to pub,
// unbounded (sync_sharedwalk.go has the walk).
func checkSignedChain(data []byte, pub ed25519.PublicKey, id, form string) signedChain {
	return checkSignedChainBounded(bytesSource(data), pub, id, form, nil, SeenHead{}).signedChain
}

// judgeSignedChain says what a device's walked chain file counts for:
// the problem sentence ("" when every line counts), the lines that do.
func judgeSignedChain(who, file string, c signedChain) (problem string, entries uint32, sums []service.Summary, head service.AuditHead) {
	var sentences []string
	if c.unsigned > 0 {
		named := strings.Join(c.namedUnsigned, ", ")
		if c.unsigned > len(c.namedUnsigned) {
			named += fmt.Sprintf(" and %d more", c.unsigned-len(c.namedUnsigned))
		}
		sentences = append(sentences, fmt.Sprintf("%s: %d of the %d line(s) of its %s are not signed by its key: %s. They were forged or altered in sync_dir, and are left out of every figure",
			who, c.unsigned, c.lines, file, named))
	}
	if !c.chain.OK {
		sentences = append(sentences, fmt.Sprintf("%s: its %s does not verify: %s. Its sessions from there on are left out of every figure", who, file, c.chain.Problem))
	}
	if len(sentences) > 0 {
		sentences = append(sentences, fmt.Sprintf("%d signed session(s) before that still count. Look at the copy on that machine (antidrift verify there); if its own chain is fine, its next seal publishes a good copy", len(c.summaries)))
	}
	if n := len(c.summaries); n > 0 {
		head = service.AuditHead{Seq: c.summaries[n-1].Seq, Hash: c.summaries[n-1].Hash}
	}
	return strings.Join(sentences, ". "), uint32(len(c.summaries)), c.summaries, head
}

// cleanLabel keeps a device name that another machine wrote to a line of
// printable text: it is data, shown beside every session.
func cleanLabel(s string) string {
	s = strings.ToValidUTF8(s, "�")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
	if r := []rune(s); len(r) > 64 {
		s = string(r[:64]) + "…"
	}
	return s
}

// namedFew names the first few of names, and how many more there are.
func namedFew(names []string) string {
	named := strings.Join(names[:min(len(names), maxNamedBad)], ", ")
	if len(names) > maxNamedBad {
		named += fmt.Sprintf(" and %d more", len(names)-maxNamedBad)
	}
	return named
}

// shownName is a file or folder name found in sync_dir as a sentence may
// hold it: as it is when every character of it is printable, else quoted
// with the rest escaped, so a name cannot act on a terminal.
func shownName(s string) string {
	if q := strconv.Quote(s); q[1:len(q)-1] == s {
		return s
	}
	return service.Quote(s)
}

// verifyChainBytes walks a published chain by the audit hash rule.
func verifyChainBytes(chain []byte) service.AuditReport {
	v := chainVerifier{prevHash: genesisHash}
	if err := eachLineInParallel(bytes.NewReader(chain), newLineCheck, v.check); err != nil {
		return service.AuditReport{Problem: err.Error()}
	}
	r := v.report()
	if r.OK && v.lineNo == 0 {
		r.Head = service.AuditHead{}
	}
	return r
}

// duplicateClaims names device ids that more than one folder claims.
func duplicateClaims(devices []SharedDevice) []string {
	byID := map[string][]string{}
	for _, d := range devices {
		if d.ID != "" {
			byID[d.ID] = append(byID[d.ID], d.Folder)
		}
	}
	var out []string
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		if f := byID[id]; len(f) > 1 {
			out = append(out, fmt.Sprintf("%d folders claim device id %s (%s): only %s/%s is that device's, the others are copies and are left out. Delete them",
				len(f), id, strings.Join(f, ", "), LayoutFolder, id))
		}
	}
	return out
}

// CopyIsOurs reports whether dev, a copy in sync_dir under this
// directory's device id, is this machine's own: every line it holds is
// the line this machine's chain has at that seq, in the copy's form. A
// copy that is not was written by another machine using the same device
// id (a copied state directory).
func (r *Reader) CopyIsOurs(dev SharedDevice) bool {
	if len(dev.Summaries) == 0 {
		return true // nothing of it counts: its own problem says why
	}
	source, err := ReadStateFile(r.s.audit.path)
	if err != nil {
		return len(dev.Summaries) == 0
	}
	ours, _, _, _ := publishedForm(source, dev.Form == formChain, nil, dev.ID)
	hashes := map[uint64]string{}
	_ = eachLine(bytes.NewReader(ours), func(line []byte, complete bool) error {
		var k auditKeys
		if complete && decodeAuditKeys(line, &k) == nil {
			hashes[k.Seq] = k.Hash
		}
		return nil
	})
	for _, s := range dev.Summaries {
		if hashes[s.Seq] != s.Hash {
			return false
		}
	}
	return true
}

// SameIDProblem is what a report says of a copy under this machine's
// device id that this machine did not write.
func SameIDProblem(dev SharedDevice) string {
	return fmt.Sprintf("the copy in sync_dir under this machine's device id (%s/%s, named %s) holds sessions this machine never sealed: another machine uses the same device id (a copied state directory), and its sessions are not shown. "+
		"Fix: on one of the two machines, stop antidriftd, move %s out of its state directory and start it again (it makes a new id)",
		LayoutFolder, dev.Folder, service.Quote(dev.Label()), deviceFileName)
}
