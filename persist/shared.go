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

// checkSignedChain walks a device's published chain file, held to pub.
func checkSignedChain(data []byte, pub ed25519.PublicKey, id, form string) signedChain {
	var c signedChain
	v := chainVerifier{prevHash: genesisHash}
	err := eachLineInParallel(bytes.NewReader(data), newSignedLineCheck(pub, id, form), func(sv signedVerdict) {
		c.lines++
		if !sv.signed {
			c.unsigned++
			name := fmt.Sprintf("line %d", c.lines)
			if sv.seq > 0 {
				name += fmt.Sprintf(" (seq %d)", sv.seq)
			}
			if c.firstUnsigned == "" {
				c.firstUnsigned = name
			}
			if len(c.namedUnsigned) < maxNamedBad {
				c.namedUnsigned = append(c.namedUnsigned, name)
			}
			return
		}
		v.lineNo = c.lines - 1 // the walk names lines by their place in the file
		v.check(sv.lineVerdict)
		if v.bad == 0 && sv.parsed {
			c.summaries = append(c.summaries, sv.sum)
		}
	})
	c.chain = v.report()
	if err != nil {
		c.chain, c.summaries = service.AuditReport{Problem: err.Error()}, nil
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
	if !dev.OK {
		return true // not read at all: its own problem says so
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
