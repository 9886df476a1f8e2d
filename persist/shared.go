package persist

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
	names, err := root.Readdirnames(-1)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read sync_dir: %w", err)
	}
	slices.Sort(names)
	for _, n := range names {
		if n == unsignedLayout {
			if p := unsignedLayoutProblem(root); p != "" {
				problems = append(problems, p)
			}
		} else if strings.HasPrefix(n, "antidrift-v") && n != LayoutFolder {
			problems = append(problems, fmt.Sprintf("sync_dir holds %s, a layout a later antidrift writes; this one reads only %s, so the devices there are not shown. Update antidrift on this machine", n, LayoutFolder))
		}
	}
	layout, err := openIn(root, LayoutFolder, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, problems, nil
	}
	if err != nil {
		return nil, problems, fmt.Errorf("cannot read %s: %w", filepath.Join(syncDir, LayoutFolder), err)
	}
	defer layout.Close()
	folders, err := layout.Readdirnames(-1)
	if err != nil {
		return nil, problems, err
	}
	slices.Sort(folders)
	for _, folder := range folders {
		if strings.HasPrefix(folder, ".") {
			continue // Syncthing's own (.stfolder) and temp files
		}
		if strings.Contains(folder, ".sync-conflict-") {
			problems = append(problems, fmt.Sprintf("%s/%s is a Syncthing conflict copy of a device folder; it is not read. Delete it once the folder it copies is right", LayoutFolder, folder))
			continue
		}
		dir, err := openIn(layout, folder, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s/%s cannot be read (%v); it is not read", LayoutFolder, folder, err))
			continue
		}
		d, more := readDeviceDir(dir, folder, trust)
		dir.Close()
		problems = append(problems, more...)
		devices = append(devices, d)
	}
	return devices, append(problems, duplicateClaims(devices)...), nil
}

// readDeviceDir reads one device folder: device.json, the chain file it
// names, and notes every conflict copy Syncthing left beside them.
func readDeviceDir(dir *os.File, folder string, trust *Trust) (SharedDevice, []string) {
	var problems []string
	names, _ := dir.Readdirnames(-1)
	slices.Sort(names)
	for _, n := range names {
		if strings.Contains(n, ".sync-conflict-") {
			problems = append(problems, fmt.Sprintf("%s/%s/%s is a Syncthing conflict copy: two machines wrote this device's folder, which only happens when they share one device id (a copied state directory). It is not read. "+
				"Fix: give one machine a new id (stop antidriftd there, move device.json out of its state directory, start it), then delete the conflict copy",
				LayoutFolder, folder, n))
		}
	}
	meta, err := readIn(dir, PublishedDevice)
	if err != nil {
		return SharedDevice{Folder: folder, Problem: fmt.Sprintf("device folder %s: %s cannot be read (%v); it is left out. If the device publishes again, Syncthing brings it", folder, PublishedDevice, err)}, problems
	}
	var chain []byte
	var d publishedDevice
	if json.Unmarshal(meta, &d) == nil && (d.File == PublishedChain || d.File == PublishedTotals) {
		if chain, err = readIn(dir, d.File); err != nil {
			return SharedDevice{Folder: folder, ID: d.DeviceID, Name: d.DeviceName,
				Problem: fmt.Sprintf("device %s: %s cannot be read (%v); it is left out", service.Quote(d.DeviceName), d.File, err)}, problems
		}
	}
	return ReadDeviceFolder(folder, meta, chain, trust), problems
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
	d.Problem, d.Entries, d.Summaries, d.Head = judgeSignedChain(who, m.File, checkSignedChain(chain, want, m.DeviceID, m.Form))
	if m.Form == formTotals && !m.SourceOK {
		d.Problem = fmt.Sprintf("%s: the machine's own audit.jsonl does not verify (%s), so its totals copy is left out. Run antidrift verify on that machine",
			who, m.SourceProblem)
		d.Entries, d.Summaries, d.Head = 0, nil, service.AuditHead{}
	}
	d.OK = d.Problem == ""
	return d
}

// maxSignatureChecks bounds the Ed25519 checks one copy may cost a
// reader. An intact copy costs one (its last line's signature covers
// every line before it through the hash chain); a copy with forged lines
// costs a few more; a hostile one stops here, the rest of it left out.
const maxSignatureChecks = 256

// signedChain is a device's chain file walked: which lines count (signed
// by the device's key and chaining from the genesis hash, over the lines
// that do), and what is left out and why.
type signedChain struct {
	lines         int
	unsigned      int      // lines left out as not signed by the key (or altered, or unreadable)
	firstUnsigned string   // "line 3 (seq 3)"
	namedUnsigned []string // the first few of them
	broken        string   // where the lines that are signed stop chaining, "" when they do not
	unread        string   // where the checks ran out, "" when they did not
	checks        int      // signatures checked
	summaries     []service.Summary
}

// signedVerdict is what one published line says of itself, without its
// signature checked (newSignedLineCheck).
type signedVerdict struct {
	lineVerdict
	length   int  // the line's bytes, without its newline
	complete bool // it ends in a newline
	signed   bool // it ends in a signature where one belongs (not yet checked)
	sum      service.Summary
	parsed   bool
}

// wellFormed is a complete line whose sealed part passes the hash rule on
// its own: only such a line is worth a signature check.
func (v signedVerdict) wellFormed() bool {
	return v.complete && v.signed && v.unreadable == "" && v.unsealed == ""
}

// follows reports whether v comes right after seq/hash in a chain.
func (v signedVerdict) follows(seq uint64, hash string) bool {
	return v.keys.Seq == seq+1 && v.keys.PrevHash == hash
}

// newSignedLineCheck judges published lines one at a time, each on its
// own, so lines can be judged on several cores (eachLineInParallel): the
// signature's place, and the hash rule on the sealed line within. The
// signatures themselves are checked after (checkSignedChain), as few as
// the chain allows.
func newSignedLineCheck() func(line []byte, complete bool) signedVerdict {
	check := newLineCheck()
	var sealed []byte
	return func(line []byte, complete bool) signedVerdict {
		v := signedVerdict{length: len(line), complete: complete}
		body, _, ok := splitSignedLine(line)
		if !complete || !ok {
			var k auditKeys
			if complete && decodeAuditKeys(line, &k) == nil {
				v.keys.Seq = k.Seq
			}
			return v
		}
		sealed = append(append(sealed[:0], body...), '}')
		v.signed, v.lineVerdict = true, check(sealed, true)
		if v.unreadable == "" && v.unsealed == "" {
			v.parsed = json.Unmarshal(sealed, &v.sum) == nil
		}
		return v
	}
}

// checkSignedChain walks a device's published chain file, held to pub.
// Every line is judged on its own first (the hash rule, cheaply, in
// parallel); then, from the genesis hash, each stretch of well-formed
// lines that chain on from the last line that counts is taken whole when
// its last line is signed by pub (that signature covers the stretch
// through the hash chain), else line by line backwards to the last one
// that is. A well-formed line that does not chain on from what counts is
// a forgery when it is not signed (left out, and the walk goes on) and a
// break when it is (a line was removed or altered: nothing after it
// counts). At most maxSignatureChecks signatures are checked.
func checkSignedChain(data []byte, pub ed25519.PublicKey, id, form string) signedChain {
	var c signedChain
	var lines []signedVerdict
	if err := eachLineInParallel(bytes.NewReader(data), newSignedLineCheck, func(v signedVerdict) { lines = append(lines, v) }); err != nil {
		c.broken = err.Error()
		return c
	}
	c.lines = len(lines)
	starts := make([]int, len(lines)+1)
	for i, v := range lines {
		starts[i+1] = starts[i] + v.length + 1
	}
	signedAt := func(i int) bool {
		c.checks++
		_, ok := signedBy(pub, id, form, data[starts[i]:starts[i]+lines[i].length])
		return ok
	}
	leftOut := func(i int) {
		c.unsigned++
		name := fmt.Sprintf("line %d", i+1)
		if lines[i].keys.Seq > 0 {
			name += fmt.Sprintf(" (seq %d)", lines[i].keys.Seq)
		}
		if c.firstUnsigned == "" {
			c.firstUnsigned = name
		}
		if len(c.namedUnsigned) < maxNamedBad {
			c.namedUnsigned = append(c.namedUnsigned, name)
		}
	}
	tipSeq, tipHash := uint64(0), genesisHash
	for i := 0; i < len(lines); {
		if c.checks >= maxSignatureChecks {
			c.unread = fmt.Sprintf("from line %d on it was not read: it holds so many lines not signed by its key that the %d signatures one copy may cost were spent", i+1, maxSignatureChecks)
			return c
		}
		v := lines[i]
		if !v.wellFormed() {
			leftOut(i)
			i++
			continue
		}
		if !v.follows(tipSeq, tipHash) {
			if signedAt(i) {
				c.broken = fmt.Sprintf("line %d (seq %d), signed by its key, does not chain on from the lines before it that count (a line before it was removed, or altered): it and every line after it are left out", i+1, v.keys.Seq)
				return c
			}
			leftOut(i)
			i++
			continue
		}
		// The stretch i..end chains on from what counts.
		end := i
		for end+1 < len(lines) && lines[end+1].wellFormed() && lines[end+1].follows(lines[end].keys.Seq, lines[end].keys.Hash) {
			end++
		}
		found := -1
		for j := end; j >= i && c.checks < maxSignatureChecks; j-- {
			if signedAt(j) {
				found = j
				break
			}
		}
		for j := i; j <= found; j++ {
			if lines[j].parsed {
				c.summaries = append(c.summaries, lines[j].sum)
			}
		}
		if found >= 0 {
			tipSeq, tipHash = lines[found].keys.Seq, lines[found].keys.Hash
		}
		for j := max(found+1, i); j <= end; j++ {
			leftOut(j)
		}
		i = end + 1
	}
	return c
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
	for _, why := range []string{c.broken, c.unread} {
		if why != "" {
			sentences = append(sentences, fmt.Sprintf("%s: in its %s, %s", who, file, why))
		}
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
