package persist

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/antidrift/antidrift/service"
)

// The spare is the second home of pending summaries. state.json is their
// first, but replacing it needs a free page for the temp file, and on a
// disk that stays full through a stop the summary of a session that ended
// meanwhile would exist only in memory and die with the daemon. The spare
// is a file whose pages are taken while the disk has room, so that writing
// into it later needs no new space: two fixed slots, written in turn (the
// one not holding the newest copy is overwritten and fsynced, so a torn
// write leaves the other intact, as an atomic replace would).
const (
	spareFileName = "pending.spare"
	spareSlotSize = 4096
	spareSlots    = 2
)

// spareFile is what the store knows of pending.spare. Fields are guarded by
// mu, which is taken after snapshotMu.
type spareFile struct {
	path  string
	mu    sync.Mutex
	ready bool   // the file exists at its full size
	gen   uint64 // generation of the newest slot
	dirty bool   // the newest slot holds summaries
}

// spareSlot is one slot's JSON; the rest of the slot is spaces.
type spareSlot struct {
	Version int               `json:"version"` // SpareSlotVersion (absent in slots written before it: 1)
	Gen     uint64            `json:"gen"`
	Pending []service.Summary `json:"pending"`
}

// prepare creates the spare at full size while the disk has room. Errors
// are returned for the log; the store works without a spare, only less
// safely on a full disk.
func (sp *spareFile) prepare() error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.ready {
		return nil
	}
	if info, err := os.Lstat(sp.path); err == nil && info.Mode().IsRegular() && info.Size() == spareSlotSize*spareSlots {
		sp.ready = true
		return nil
	}
	blank := bytes.Repeat([]byte{' '}, spareSlotSize*spareSlots)
	if err := writeFileAtomic(sp.path, blank); err != nil {
		return fmt.Errorf("preparing %s: %w", spareFileName, err)
	}
	sp.ready = true
	return nil
}

// keep writes pending into the spare without needing new space, and
// returns how many of them fit (oldest first; a slot holds a few).
func (sp *spareFile) keep(pending []service.Summary) (kept int, err error) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if !sp.ready {
		return 0, fmt.Errorf("%s was never prepared (the disk was full or read-only from the start)", spareFileName)
	}
	var data []byte
	for kept = len(pending); kept >= 0; kept-- {
		data, err = json.Marshal(spareSlot{Version: SpareSlotVersion, Gen: sp.gen + 1, Pending: pending[:kept]})
		if err != nil {
			return 0, err
		}
		if len(data) < spareSlotSize {
			break
		}
	}
	if err := sp.writeSlot(sp.gen+1, data); err != nil {
		return 0, err
	}
	sp.gen++
	sp.dirty = kept > 0
	return kept, nil
}

// clear empties the spare once state.json holds the pending list again.
func (sp *spareFile) clear() error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if !sp.dirty {
		return nil
	}
	data, _ := json.Marshal(spareSlot{Version: SpareSlotVersion, Gen: sp.gen + 1, Pending: []service.Summary{}})
	if err := sp.writeSlot(sp.gen+1, data); err != nil {
		return err
	}
	sp.gen++
	sp.dirty = false
	return nil
}

// writeSlot overwrites slot gen%spareSlots in place with data padded by
// spaces, and fsyncs it. Called with mu held.
func (sp *spareFile) writeSlot(gen uint64, data []byte) error {
	f, err := openFile(sp.path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	slot := make([]byte, spareSlotSize)
	copy(slot, data)
	for i := len(data); i < len(slot); i++ {
		slot[i] = ' '
	}
	if _, err := f.WriteAt(slot, int64(gen%spareSlots)*spareSlotSize); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// load reads the newest intact slot. A missing or unreadable spare holds
// nothing; a slot that does not parse (a torn write) is passed over.
func (sp *spareFile) load() []service.Summary {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	data, err := ReadStateFile(sp.path)
	if err != nil {
		return nil
	}
	sp.ready = len(data) == spareSlotSize*spareSlots
	var newest spareSlot
	for start := 0; start+spareSlotSize <= len(data); start += spareSlotSize {
		var slot spareSlot
		dec := json.NewDecoder(bytes.NewReader(data[start : start+spareSlotSize]))
		// A slot of a later version is not this build's to read (the
		// daemon refuses to open such a directory; a reader passes it by).
		if dec.Decode(&slot) == nil && slot.Version <= SpareSlotVersion && slot.Gen >= newest.Gen {
			newest = slot
		}
	}
	sp.gen, sp.dirty = newest.Gen, len(newest.Pending) > 0
	return newest.Pending
}

// adoptSpare adds to snap the pending summaries that only the spare holds
// (not in state.json's list, not sealed), and says so in problem.
func (s *Store) adoptSpare(snap *service.Snapshot) (problem string) {
	kept := s.spare.load()
	if len(kept) == 0 {
		return ""
	}
	s.audit.mu.Lock()
	sealed := s.audit.sealed
	s.audit.mu.Unlock()
	var adopted []string
	for _, sum := range kept {
		known := sealed[sum.SessionID]
		for _, p := range snap.Pending {
			known = known || p.SessionID == sum.SessionID
		}
		if !known {
			snap.Pending = append(snap.Pending, sum)
			adopted = append(adopted, sum.SessionID)
		}
	}
	if len(adopted) == 0 {
		return ""
	}
	return fmt.Sprintf("%d ended session(s) (%v) were recovered from %s: %s could not be saved when they ended (the disk was full or failing); they are sealed as soon as the disk takes it",
		len(adopted), adopted, spareFileName, stateFileName)
}
