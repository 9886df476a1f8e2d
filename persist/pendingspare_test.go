package persist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antidrift/antidrift/internal/testsupport/testenv"
	"github.com/antidrift/antidrift/service"
)

// A session that ends on a disk that stays full, through a restart, is not
// lost: state.json cannot be replaced, so its summary goes into the spare,
// whose pages were taken while there was room, and the next start adopts
// it and says so. Once state.json takes the list again the spare is emptied.
func TestFullDiskKeepsPendingInTheSpare(t *testing.T) {
	mnt := testenv.Tmpfs(t, "64k")
	dir := filepath.Join(mnt.Dir, "antidrift")
	s := openStore(t, dir)
	locked := service.Snapshot{State: service.StateLocked}
	if err := s.SaveSnapshot(locked); err != nil {
		t.Fatal(err)
	}
	ballast := filepath.Join(mnt.Dir, "ballast")
	testenv.Fill(t, ballast)

	ended := []service.Summary{sampleSummary(1), sampleSummary(2)}
	err := s.SaveSnapshot(service.Snapshot{State: service.StateLocked, Pending: ended})
	if err == nil {
		t.Fatal("SaveSnapshot on a full disk: got success (state.json replaced), want a failure: the test needs one")
	}
	if !strings.Contains(err.Error(), "kept in "+spareFileName) {
		t.Fatalf("the failed save: got %v, want it to say the pending summaries are kept in %s", err, spareFileName)
	}
	s.Close()

	s = openStore(t, dir) // the disk is still full
	snap, found, problem, err := s.LoadSnapshot()
	if err != nil || !found {
		t.Fatalf("LoadSnapshot: got found %v, err %v; want found", found, err)
	}
	if len(snap.Pending) != 2 || snap.Pending[0].SessionID != ended[0].SessionID || snap.Pending[1].SessionID != ended[1].SessionID {
		t.Fatalf("pending after the restart: got %+v, want %s and %s", snap.Pending, ended[0].SessionID, ended[1].SessionID)
	}
	if !containsAll(problem, spareFileName, ended[0].SessionID, "could not be saved") {
		t.Fatalf("the start's problem: got %q, want what was recovered (%s, %s) and why (could not be saved)", problem, spareFileName, ended[0].SessionID)
	}

	// Room again: the list is saved in state.json, one summary sealed; the
	// spare is emptied and a later start adopts nothing twice.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendAudit(ended[0]); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveSnapshot(service.Snapshot{State: service.StateLocked, Pending: ended[1:]}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openStore(t, dir)
	snap, _, problem, err = s.LoadSnapshot()
	if err != nil || problem != "" || len(snap.Pending) != 1 || snap.Pending[0].SessionID != ended[1].SessionID {
		t.Fatalf("after the save: got pending %+v, problem %q, err %v; want only %s, no problem", snap.Pending, problem, err, ended[1].SessionID)
	}
}

// A damaged state.json set aside does not take the pending summaries with
// it when the spare holds them.
func TestSpareOutlivesADamagedStateFile(t *testing.T) {
	dir := newStateDir(t)
	s := openStore(t, dir)
	if err := s.SaveSnapshot(service.Snapshot{State: service.StateLocked}); err != nil {
		t.Fatal(err)
	}
	ended := []service.Summary{sampleSummary(7)}
	if _, err := s.spare.keep(ended); err != nil {
		t.Fatal(err)
	}
	s.Close()
	writeFile(t, filepath.Join(dir, stateFileName), []byte("{not json"))
	s = openStore(t, dir)
	snap, _, problem, err := s.LoadSnapshot()
	if err != nil || len(snap.Pending) != 1 || snap.Pending[0].SessionID != ended[0].SessionID {
		t.Fatalf("pending: got %+v, err %v; want %s", snap.Pending, err, ended[0].SessionID)
	}
	if !containsAll(problem, "damaged", spareFileName) {
		t.Fatalf("problem: got %q, want %s named as damaged", problem, spareFileName)
	}
}

// A torn write of one slot leaves the other: the spare reads the newest
// slot that parses.
func TestSpareSurvivesATornSlot(t *testing.T) {
	dir := newStateDir(t)
	s := openStore(t, dir)
	if err := s.SaveSnapshot(service.Snapshot{State: service.StateLocked}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.spare.keep([]service.Summary{sampleSummary(1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.spare.keep([]service.Summary{sampleSummary(1), sampleSummary(2)}); err != nil {
		t.Fatal(err)
	}
	// Tear the newest slot (generation 2, slot 0) as a power loss mid-write would.
	f, err := os.OpenFile(s.spare.path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte(`{"gen":3,"pending":[{"sess`), 0)
	f.Close()
	if got := s.spare.load(); len(got) != 1 || got[0].SessionID != sampleSummary(1).SessionID {
		t.Fatalf("the spare after a torn slot: got %+v, want the older generation, %s", got, sampleSummary(1).SessionID)
	}
}
