package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/antidrift/antidrift/internal/inert"
	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

// journalHead is one head of the audit chain as the daemon logged it at a
// seal (MESSAGE_ID service.AuditHeadMessageID).
type journalHead struct {
	Seq       uint64
	Hash      string
	SessionID string
	At        time.Time
}

// readJournalHeads asks journalctl for every seal the daemon logged. The
// journal is storage the person's own processes cannot rewrite (and, with
// journalctl --setup-keys, sealed): it still knows the heads when both
// audit.jsonl and state.json were rewritten. journalctl is the well-kept
// reader; the CLI needs no cgo. err says why no journal was reachable.
func readJournalHeads() ([]journalHead, error) {
	if _, err := exec.LookPath("journalctl"); err != nil {
		return nil, errors.New("journalctl is not installed")
	}
	cmd := exec.Command("journalctl", "--no-pager", "-o", "json", "MESSAGE_ID="+service.AuditHeadMessageID, "_UID="+strconv.Itoa(os.Getuid()))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("journalctl failed (%v): %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	heads, err := parseJournalHeads(out)
	if err != nil || len(heads) > 0 {
		return heads, err
	}
	// No seal in the journal. journalctl says the same when there is no
	// journal at all (no journald, a container), and "the journal recorded
	// 0 seals" would then read like a check that passed.
	return nil, noJournal()
}

// noJournal is nil when journalctl shows any entry of this user at all
// (a journal is there; it recorded no seal), else why no journal is
// reachable.
func noJournal() error {
	out, err := exec.Command("journalctl", "--no-pager", "--quiet", "-n", "1", "-o", "cat", "_UID="+strconv.Itoa(os.Getuid())).Output()
	if err == nil && len(bytes.TrimSpace(out)) > 0 {
		return nil
	}
	if _, err := os.Stat("/run/systemd/journal/socket"); err != nil {
		return errors.New("systemd-journald is not running here (no /run/systemd/journal/socket) and journalctl finds no entries of yours")
	}
	return errors.New("journalctl finds no entries of yours (is your user's journal kept? see Storage= in journald.conf)")
}

// parseJournalHeads reads journalctl -o json output: one object per line,
// every field a string.
func parseJournalHeads(out []byte) ([]journalHead, error) {
	var heads []journalHead
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e struct {
			Seq       string `json:"ANTIDRIFT_AUDIT_SEQ"`
			Hash      string `json:"ANTIDRIFT_AUDIT_HASH"`
			SessionID string `json:"ANTIDRIFT_SESSION_ID"`
			Realtime  string `json:"__REALTIME_TIMESTAMP"`
		}
		if len(bytes.TrimSpace(sc.Bytes())) == 0 || json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		seq, err := strconv.ParseUint(e.Seq, 10, 64)
		if err != nil || e.Hash == "" {
			continue
		}
		us, _ := strconv.ParseInt(e.Realtime, 10, 64)
		heads = append(heads, journalHead{Seq: seq, Hash: e.Hash, SessionID: e.SessionID, At: time.UnixMicro(us)})
	}
	return heads, sc.Err()
}

// chainHeads maps each seq in audit.jsonl to its hash, as the file says.
func chainHeads(path string) (map[uint64]string, error) {
	data, err := persist.ReadStateFile(path) // never through a link, as the daemon reads it
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	heads := map[uint64]string{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var e struct {
			Seq  uint64 `json:"seq"`
			Hash string `json:"hash"`
		}
		if json.Unmarshal(line, &e) == nil && e.Seq > 0 {
			heads[e.Seq] = e.Hash
		}
	}
	return heads, nil
}

// missingHeads says, for every head the journal recorded that the file
// does not hold (no line with its seq, or one with another hash), what is
// missing. Seals recorded under the same seq more than once (a chain cut
// and continued) are each checked. The hashes and session ids are the
// files' and the journal's, whatever was written there: made inert, as a
// line of verify's message.
func missingHeads(journal []journalHead, file map[uint64]string) []string {
	var out []string
	for _, h := range journal {
		have, ok := file[h.Seq]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("the journal recorded seq %d (hash %s…, session %s) sealed at %s, but audit.jsonl has no seq %d",
				h.Seq, short8(h.Hash), inert.Terminal(h.SessionID), h.At.Format("2006-01-02 15:04"), h.Seq))
		case have != h.Hash:
			out = append(out, fmt.Sprintf("the journal recorded seq %d with hash %s… (session %s, sealed at %s), but audit.jsonl's seq %d has hash %s…",
				h.Seq, short8(h.Hash), inert.Terminal(h.SessionID), h.At.Format("2006-01-02 15:04"), h.Seq, short8(have)))
		}
	}
	return out
}

func short8(hash string) string {
	return inert.Terminal(string([]rune(hash)[:min(len([]rune(hash)), 8)]))
}

// auditPath is audit.jsonl in stateDir, or in the daemon's default state
// directory.
func auditPath(stateDir string) (string, error) {
	if stateDir == "" {
		var err error
		if stateDir, err = persist.DefaultDir(); err != nil {
			return "", err
		}
	}
	return filepath.Join(stateDir, "audit.jsonl"), nil
}
