package persist

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// seenFileName is where the daemon remembers the furthest head of every
// other device's copy it has read (device id and form → seq and hash).
// It is this machine's own memory, not the other devices' data: a copy
// that later ends before that head, or holds another line there, was
// truncated or rewritten, which its own hash chain cannot show.
const seenFileName = "devices-seen.json"

// SeenHead is the furthest head this machine saw of one device's copy.
type SeenHead struct {
	Seq      uint64 `json:"seq"`
	Hash     string `json:"hash"`
	SeenUnix int64  `json:"seen_unix"`
}

type seenFile struct {
	Version int                 `json:"version"`
	Heads   map[string]SeenHead `json:"heads"` // "<device id>/<form>"
}

func seenKey(id, form string) string { return id + "/" + form }

// SeenKey is the key of SeenHeads' map for a device's copy in form.
func SeenKey(id, form string) string { return seenKey(id, form) }

// SeenHeads is every head remembered, read once, by SeenKey.
func (r *Reader) SeenHeads() map[string]SeenHead { return readSeen(r.s.dir).Heads }

// SeenHead is the head remembered for a device's copy in form (false when
// none is).
func (r *Reader) SeenHead(id, form string) (SeenHead, bool) {
	h, ok := readSeen(r.s.dir).Heads[seenKey(id, form)]
	return h, ok
}

func readSeen(dir string) seenFile {
	var f seenFile
	if data, err := ReadStateFile(filepath.Join(dir, seenFileName)); err == nil {
		_ = json.Unmarshal(data, &f)
	}
	if f.Heads == nil {
		f.Heads = map[string]SeenHead{}
	}
	return f
}

// maxSeenHeads bounds devices-seen.json: far more machines than a person
// has; past it the heads seen longest ago are let go.
const maxSeenHeads = 64

// RememberDevices records, for each copy, the head of the lines that
// count (signed by the device's pinned key and chaining: a forged line is
// never among them, so it never becomes a mark) when it reaches past the
// one remembered (a copy that falls behind is reported by the reader, and
// must not lower the mark). present, when not nil, is every device folder
// in sync_dir: the heads of devices no longer there are let go, so the
// file keeps only devices that still exist (and at most maxSeenHeads).
// Only the daemon calls it.
func (s *Store) RememberDevices(devices []SharedDevice, present map[string]bool) error {
	s.snapshotMu.Lock()
	defer s.snapshotMu.Unlock()
	f := readSeen(s.dir)
	changed := false
	for _, d := range devices {
		if d.Head.Seq == 0 {
			continue
		}
		k := seenKey(d.ID, d.Form)
		if old, ok := f.Heads[k]; ok {
			if _, rewritten := Behind(d, old); rewritten || old.Seq >= d.Head.Seq {
				continue // a rewritten copy keeps the old mark, so it stays reported
			}
		}
		f.Heads[k] = SeenHead{Seq: d.Head.Seq, Hash: d.Head.Hash, SeenUnix: s.now().Unix()}
		changed = true
	}
	if present != nil {
		for k := range f.Heads {
			if id, _, _ := strings.Cut(k, "/"); !present[id] {
				delete(f.Heads, k)
				changed = true
			}
		}
	}
	if len(f.Heads) > maxSeenHeads {
		keys := slices.SortedFunc(maps.Keys(f.Heads), func(a, b string) int {
			return cmp.Or(cmp.Compare(f.Heads[b].SeenUnix, f.Heads[a].SeenUnix), cmp.Compare(a, b))
		})
		for _, k := range keys[maxSeenHeads:] {
			delete(f.Heads, k)
		}
		changed = true
	}
	if !changed {
		return nil
	}
	f.Version = SeenFileVersion
	data, _ := json.Marshal(f)
	if err := writeFileAtomic(filepath.Join(s.dir, seenFileName), append(data, '\n')); err != nil {
		return fmt.Errorf("saving %s: %w", seenFileName, err)
	}
	return nil
}

// Behind says, for the lines of a copy that count, whether they end
// before the head remembered for it (truncated: what is left still
// counts) or hold another line at that seq (rewritten: nothing of it can
// be trusted); "" when neither.
func Behind(d SharedDevice, seen SeenHead) (problem string, rewritten bool) {
	if seen.Seq == 0 || (!d.OK && len(d.Summaries) == 0) {
		return "", false
	}
	when := time.Unix(seen.SeenUnix, 0).UTC().Format("2006-01-02 15:04 UTC")
	if d.Head.Seq < seen.Seq {
		return fmt.Sprintf("device %s: its copy ends at seq %d, but this machine read it up to seq %d (hash %s…) on %s: the copy was truncated or rolled back (a restored backup, a Syncthing folder reset). "+
			"Its sessions are shown as far as they go. Look on that machine: if its own chain is longer, its next seal publishes it again",
			quoteLabel(d), d.Head.Seq, seen.Seq, short(seen.Hash), when), false
	}
	for _, s := range d.Summaries {
		if s.Seq == seen.Seq && s.Hash != seen.Hash {
			return fmt.Sprintf("device %s: seq %d of its copy has hash %s…, but this machine read hash %s… there on %s: the copy was rewritten from that point, so its sessions are left out. Run antidrift verify on that machine",
				quoteLabel(d), seen.Seq, short(s.Hash), short(seen.Hash), when), true
		}
	}
	return "", false
}

func quoteLabel(d SharedDevice) string { return fmt.Sprintf("%q (%s)", d.Label(), d.Folder) }
