package persist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/antidrift/antidrift/service"
)

// auditChain is what the store remembers of audit.jsonl between appends, so
// sealing a summary needs no re-read of the file. Fields after mu are
// guarded by it.
type auditChain struct {
	path string

	mu       sync.Mutex
	lastSeq  uint64
	lastHash string          // "" while the chain is empty
	sealed   map[string]bool // session ids already in the chain
	// stale is set when an append failed: the file may now hold a partial
	// or even a whole line that the fields above do not know about, so they
	// are reloaded from the file before they are trusted again.
	stale bool
	// anchor is the head recorded at the last seal (state.json keeps it).
	// It moves on with an append only when the file ended at it, so a cut
	// or rewritten tail stays reported after later seals.
	anchor service.AuditHead
}

// auditKeys are the keys of an audit line the store itself needs.
type auditKeys struct {
	Seq       uint64 `json:"seq"`
	PrevHash  string `json:"prev_hash"`
	SessionID string `json:"session_id"`
	Hash      string `json:"hash"`
}

// decodeAuditKeys decodes the keys the store needs from one audit line, on
// the fast path when it can (see flatjson.go): verifying a long chain must
// stay quick.
func decodeAuditKeys(line []byte, keys *auditKeys) error {
	if fastAuditKeys(line, keys) {
		return nil
	}
	*keys = auditKeys{}
	return json.Unmarshal(line, keys)
}

func fastAuditKeys(line []byte, keys *auditKeys) bool {
	return eachMember(line, func(key, value []byte) bool {
		switch string(key) {
		case "seq":
			return setUint(value, &keys.Seq)
		case "prev_hash":
			return setString(value, &keys.PrevHash, nil)
		case "session_id":
			return setString(value, &keys.SessionID, nil)
		case "hash":
			return setString(value, &keys.Hash, nil)
		}
		return unknownKeyIsSafe(key, "seq", "prev_hash", "session_id", "hash")
	})
}

// AppendAudit seals sum as the next link of the chain: it assigns Seq,
// PrevHash and Hash (see chain.go for the rule), appends the line in one
// write, fsyncs it, and returns the summary as written.
func (s *Store) AppendAudit(sum service.Summary) (service.Summary, error) {
	a := &s.audit
	a.mu.Lock()
	defer a.mu.Unlock()
	if s.closed.Load() {
		return sum, errClosed
	}
	if err := s.reloadAuditIfStale(); err != nil {
		return sum, err
	}
	prevHash := a.lastHash
	if prevHash == "" {
		prevHash = genesisHash
	}
	line, sealed, err := sealSummary(sum, a.lastSeq, prevHash)
	if err != nil {
		return sum, fmt.Errorf("sealing session %s: %w", sum.SessionID, err)
	}
	if err := appendDurably(a.path, line); err != nil {
		a.stale = true
		return sum, fmt.Errorf("sealing session %s into %s: %w", sum.SessionID, auditFileName, err)
	}
	if a.anchor.Seq == 0 || (a.anchor.Seq == a.lastSeq && a.anchor.Hash == a.lastHash) {
		a.anchor = service.AuditHead{Seq: sealed.Seq, Hash: sealed.Hash, SealedUnixMilli: s.now().UnixMilli()}
	}
	a.lastSeq, a.lastHash = sealed.Seq, sealed.Hash
	a.sealed[sealed.SessionID] = true
	return sealed, nil
}

// AuditContains reports whether sessionID is already sealed in the chain.
func (s *Store) AuditContains(sessionID string) (bool, error) {
	a := &s.audit
	a.mu.Lock()
	defer a.mu.Unlock()
	if s.closed.Load() {
		return false, errClosed
	}
	if err := s.reloadAuditIfStale(); err != nil {
		return false, err
	}
	return a.sealed[sessionID], nil
}

// AuditHead is the hash of the last sealed summary, "" when none is.
func (s *Store) AuditHead() string {
	a := &s.audit
	a.mu.Lock()
	defer a.mu.Unlock()
	_ = s.reloadAuditIfStale() // on failure the last known head is the best answer
	return a.lastHash
}

// History returns up to limit sealed summaries, newest first; limit <= 0
// means all. Lines that do not parse are left out: VerifyAudit is the place
// that reports them.
func (s *Store) History(limit int) ([]service.Summary, error) {
	a := &s.audit
	a.mu.Lock()
	defer a.mu.Unlock()
	f, err := openFile(a.path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var sums []service.Summary
	err = eachLine(f, func(line []byte, complete bool) error {
		var sum service.Summary
		if !complete || json.Unmarshal(line, &sum) != nil {
			return nil
		}
		sums = append(sums, sum)
		if limit > 0 && len(sums) >= 2*limit {
			sums = append(sums[:0], sums[len(sums)-limit:]...) // keep memory bounded by limit
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", auditFileName, err)
	}
	if limit > 0 && len(sums) > limit {
		sums = sums[len(sums)-limit:]
	}
	slices.Reverse(sums)
	return sums, nil
}

// reloadAuditIfStale reloads the chain state after a failed append. Called
// with a.mu held.
func (s *Store) reloadAuditIfStale() error {
	if !s.audit.stale {
		return nil
	}
	// A torn tail moved aside here was our own failed write, already
	// reported by the append that failed; the side file keeps the bytes.
	if _, err := s.loadAuditChain(); err != nil {
		return fmt.Errorf("rereading %s after a failed append: %w", auditFileName, err)
	}
	return nil
}

// loadAuditChain sets aside a torn tail of audit.jsonl, then reads the last
// seq and hash and every sealed session id. Lines that do not parse are
// passed over here; VerifyAudit names them. Called at Open or with a.mu
// held.
func (s *Store) loadAuditChain() (problem string, err error) {
	a := &s.audit
	problem, err = s.setAsideTornAuditTail()
	if err != nil {
		return problem, err
	}
	a.lastSeq, a.lastHash, a.sealed = 0, "", map[string]bool{}
	f, err := openFile(a.path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		a.stale = false
		return problem, nil
	}
	if err != nil {
		return problem, err
	}
	defer f.Close()
	err = eachLine(f, func(line []byte, complete bool) error {
		var keys auditKeys
		if complete && decodeAuditKeys(line, &keys) == nil {
			a.lastSeq, a.lastHash = keys.Seq, keys.Hash
			a.sealed[keys.SessionID] = true
		}
		return nil
	})
	if err != nil {
		return problem, fmt.Errorf("reading %s: %w", auditFileName, err)
	}
	a.stale = false
	return problem, nil
}

// setAsideTornAuditTail moves bytes after the last "\n" of audit.jsonl (a
// line the writer never finished) to audit.jsonl.torn-<unix>, so the next
// append starts on a line of its own. The torn bytes are durable in the side
// file before audit.jsonl is truncated: no byte is ever lost.
func (s *Store) setAsideTornAuditTail() (problem string, err error) {
	path := s.audit.path
	// Read-only until there is a tail to move: a healthy audit.jsonl on a
	// read-only file system must not keep the daemon from starting.
	f, err := openFile(path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", err
	}
	size := info.Size()
	keep, err := lengthThroughLastNewline(f, size)
	if err != nil || keep == size {
		return "", err
	}
	torn := make([]byte, size-keep)
	if _, err := f.ReadAt(torn, keep); err != nil {
		return "", err
	}
	side, err := s.asideName(path, "torn")
	if err != nil {
		return "", err
	}
	if err := writeFileAtomic(side, torn); err != nil {
		return "", fmt.Errorf("saving the unfinished last line of %s: %w", auditFileName, err)
	}
	w, err := openFile(path, os.O_WRONLY, 0)
	if err != nil {
		return "", err
	}
	defer w.Close()
	if err := w.Truncate(keep); err != nil {
		return "", err
	}
	if err := w.Sync(); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s ended in an unfinished line (%d bytes, from a crash mid-write); moved it to %s so the chain can continue",
		auditFileName, len(torn), filepath.Base(side)), nil
}

// lengthThroughLastNewline returns the length of f's first size bytes up to
// and including the last "\n" (0 when there is none), reading backwards so
// a long file costs one small read.
func lengthThroughLastNewline(f io.ReaderAt, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		start := max(end-int64(len(buf)), 0)
		chunk := buf[:end-start]
		if _, err := f.ReadAt(chunk, start); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}
