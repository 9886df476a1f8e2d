package persist

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// A synced machine gone bad must cost the others little: one read of
// sync_dir (a report, history, verify, the daemon's Report, the
// publisher's pass after a seal) takes at most these, whatever the folders
// hold, and names what it left out. A person's real record sits far
// inside them: a chain line is about 1 KiB, so a device's 16 MiB is some
// fifteen thousand sessions, years of them.
type ReadBounds struct {
	Devices     int   // device folders read; the rest are named, not opened
	DeviceBytes int64 // of one device's chain file; the rest of it is left out
	TotalBytes  int64 // of every chain file together
	// DeviceChecks and TotalChecks bound the lines whose signature is
	// checked (the costly part: Ed25519, some 100 µs a line here). Lines
	// up to a device's remembered head are checked by their hash chain
	// alone (sync_seen.go), so a known device's record costs signatures only
	// for what is new since the daemon last read it; a device first seen
	// with a longer record is read that much further at each pass.
	DeviceChecks int64
	TotalChecks  int64
	// Listed bounds the names read from one directory of sync_dir.
	Listed int
}

// DefaultReadBounds are the bounds every reader uses.
var DefaultReadBounds = ReadBounds{
	Devices:      16,
	DeviceBytes:  16 << 20,
	TotalBytes:   128 << 20,
	DeviceChecks: 2048,
	TotalChecks:  4096,
	Listed:       4096,
}

// maxDeviceFile bounds device.json: a few hundred bytes when a machine
// writes it.
const maxDeviceFile = 64 << 10

// readBudget is what is left of one read's bounds; the signature checks
// are taken by the workers of eachLineInParallel, so they are atomic.
type readBudget struct {
	b ReadBounds
	// deviceChecks and deviceBytes are a device's share (share).
	deviceChecks, deviceBytes int64
	bytes                     int64        // total bytes left
	checks                    atomic.Int64 // total checks left
}

func newReadBudget(b ReadBounds) *readBudget {
	r := &readBudget{b: b, bytes: b.TotalBytes, deviceChecks: b.DeviceChecks, deviceBytes: b.DeviceBytes}
	r.checks.Store(b.TotalChecks)
	return r
}

// deviceChecks is one device's share of the signature checks: a take
// succeeds while both it and the total have one left.
type deviceChecks struct {
	b     ReadBounds
	total *atomic.Int64
	left  atomic.Int64
}

func (r *readBudget) forDevice() *deviceChecks {
	if r == nil {
		return nil
	}
	d := &deviceChecks{b: r.b, total: &r.checks}
	d.left.Store(r.deviceChecks)
	return d
}

// share splits the totals fairly between the n folders a read opens: no
// device may take more than its share, so the devices read first cannot
// leave nothing for the ones read after.
func (r *readBudget) share(n int) {
	n = max(n, 1)
	r.deviceChecks = min(r.b.DeviceChecks, r.b.TotalChecks/int64(n))
	r.deviceBytes = min(r.b.DeviceBytes, r.b.TotalBytes/int64(n))
}

func (d *deviceChecks) take() bool {
	if d == nil {
		return true
	}
	if d.left.Add(-1) < 0 {
		return false
	}
	return d.total.Add(-1) >= 0
}

// countingReader counts what was read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readNames reads at most max names of dir, sorted; more says there were
// more (left out).
func readNames(dir *os.File, max int) (names []string, more bool, err error) {
	names, err = dir.Readdirnames(max + 1)
	if err == io.EOF {
		err = nil
	}
	if len(names) > max {
		names, more = names[:max], true
	}
	slices.Sort(names)
	return names, more, err
}

// orderFolders puts this machine's own folder first, then the folders of
// devices it already knows (a pinned key, a remembered head; the longest
// pinned first), before the ones it does not, each part sorted, and cuts
// the list at n: a flood of new folders cannot push a known machine out.
func orderFolders(folders []string, trust *Trust, seen seenFile, n int) (read, left []string) {
	known := func(f string) bool {
		if f == trust.ownID && f != "" {
			return true
		}
		if _, ok := trust.pins[f]; ok {
			return true
		}
		return seen.Heads[seenKey(f, formChain)].Seq > 0 || seen.Heads[seenKey(f, formTotals)].Seq > 0
	}
	var first, rest []string
	if slices.Contains(folders, trust.ownID) && trust.ownID != "" {
		first = append(first, trust.ownID) // this machine's own copy, checked first
	}
	for _, f := range folders {
		if f == trust.ownID && f != "" {
			continue
		}
		if known(f) {
			first = append(first, f)
		} else {
			rest = append(rest, f)
		}
	}
	// Among the known, the devices pinned longest ago first: a machine gone
	// bad that had new folders of its own pinned here cannot push out the
	// machines pinned before it by choosing names that sort first.
	own := len(first) > 0 && first[0] == trust.ownID && trust.ownID != ""
	pinnedFirst := first
	if own {
		pinnedFirst = first[1:]
	}
	slices.SortStableFunc(pinnedFirst, func(a, b string) int {
		pa, oka := trust.pins[a]
		pb, okb := trust.pins[b]
		switch {
		case oka && okb:
			return cmp.Compare(pa.PinnedUnix, pb.PinnedUnix)
		case oka:
			return -1
		case okb:
			return 1
		}
		return 0
	})
	all := append(first, rest...)
	if len(all) <= n {
		return all, nil
	}
	return all[:n], all[n:]
}

// leftOutFolders names the device folders a read did not open.
func leftOutFolders(left []string, bound int, more bool) string {
	if len(left) == 0 && !more {
		return ""
	}
	named := left
	if len(named) > maxNamedBad {
		named = named[:maxNamedBad]
	}
	list := strings.Join(named, ", ")
	if n := len(left) - len(named); n > 0 {
		list += fmt.Sprintf(" and %d more", n)
	}
	if more {
		list += " and more besides"
	}
	return fmt.Sprintf("%s holds more device folders than the %d this machine reads: %s not read (machines already known here are read first). A person has a few machines: look for folders no machine of yours wrote, and delete them",
		LayoutFolder, bound, list)
}

// fileSize is an open file's size, -1 when it cannot be told.
func fileSize(f *os.File) int64 {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return -1
	}
	return st.Size
}

// Stamp is what a device folder's files were at a read: a pass that finds
// the same stamp need not read the folder again.
type Stamp struct {
	Meta, Chain fileStamp
}

type fileStamp struct {
	Ino, Size, MtimeNs int64
}

func stampOf(f *os.File) fileStamp {
	var st unix.Stat_t
	if f == nil || unix.Fstat(int(f.Fd()), &st) != nil {
		return fileStamp{}
	}
	return fileStamp{Ino: int64(st.Ino), Size: st.Size, MtimeNs: st.Mtim.Nano()}
}

// listDeviceFolders is every device folder's name in sync_dir's layout
// folder; complete is false when it could not be read in whole (then
// nothing may be judged gone).
func listDeviceFolders(syncDir string) (present map[string]bool, complete bool) {
	root, err := os.Open(syncDir)
	if err != nil {
		return nil, false
	}
	defer root.Close()
	layout, err := openIn(root, LayoutFolder, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, false
	}
	defer layout.Close()
	names, more, err := readNames(layout, 4*DefaultReadBounds.Listed)
	if err != nil || more {
		return nil, false
	}
	present = map[string]bool{}
	for _, n := range names {
		present[n] = true
	}
	return present, true
}
