package persist

import (
	"bytes"
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
	Entries       uint32            // lines that verify
	Head          service.AuditHead // the chain file's last line, when OK
	OK            bool
	Problem       string // why it is left out: the device, the file, the first bad line, what to do
	Summaries     []service.Summary
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

// ReadShared reads every device folder under <syncDir>/antidrift-v1,
// each verified on its own, never through a symbolic link. problems are
// what is wrong beside any one device's chain: a later layout, a folder
// that is no device's, two folders claiming one device id, a Syncthing
// conflict copy; each says what to do. A sync_dir holding no layout
// folder yet reads as no devices.
func ReadShared(syncDir string) (devices []SharedDevice, problems []string, err error) {
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
			return nil, []string{fmt.Sprintf("sync_dir %s does not exist: no other machine's record is read. Create it as the folder Syncthing shares (docs/sync.md)", syncDir)}, nil
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
		if strings.HasPrefix(n, "antidrift-v") && n != LayoutFolder {
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
		d, more := readDeviceDir(dir, folder)
		dir.Close()
		problems = append(problems, more...)
		devices = append(devices, d)
	}
	return devices, append(problems, duplicateClaims(devices)...), nil
}

// readDeviceDir reads one device folder: device.json, the chain file it
// names, and notes every conflict copy Syncthing left beside them.
func readDeviceDir(dir *os.File, folder string) (SharedDevice, []string) {
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
	return ReadDeviceFolder(folder, meta, chain), problems
}

// ReadDeviceFolder judges one device folder from its device.json and its
// chain file's bytes: it never fails, it says what is wrong in Problem.
// (It is the layout's whole reader of bytes, and what the fuzz test
// feeds.)
func ReadDeviceFolder(folder string, meta, chain []byte) SharedDevice {
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
	v := verifyChainBytes(chain)
	d.Entries = v.Entries
	if !v.OK {
		d.Problem = fmt.Sprintf("%s: its %s does not verify: %s. Its sessions are left out of every figure. Look at the copy on that machine (antidrift verify there); if its own chain is fine, its next seal publishes a good copy",
			who, m.File, v.Problem)
		return d
	}
	if m.Form == formTotals && !m.SourceOK {
		d.Problem = fmt.Sprintf("%s: the machine's own audit.jsonl does not verify (%s), so its totals copy is left out. Run antidrift verify on that machine",
			who, m.SourceProblem)
		return d
	}
	d.OK, d.Head = true, v.Head
	_ = eachLine(bytes.NewReader(chain), func(line []byte, complete bool) error {
		var sum service.Summary
		if complete && json.Unmarshal(line, &sum) == nil {
			d.Summaries = append(d.Summaries, sum)
		}
		return nil
	})
	return d
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
	ours, _, _, _ := publishedForm(source, dev.Form == formChain)
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
