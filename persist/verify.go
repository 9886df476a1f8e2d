package persist

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"os"

	"github.com/antidrift/antidrift/service"
)

// VerifyAudit walks every line of audit.jsonl and checks that each is
// unaltered (its hash matches its bytes), in place (seq follows the previous
// one) and linked (prev_hash is the previous line's hash). It stops at the
// first bad line and names it; Entries counts the good lines before it.
func (s *Store) VerifyAudit() service.AuditReport {
	a := &s.audit
	a.mu.Lock()
	defer a.mu.Unlock()
	f, err := os.Open(a.path)
	if errors.Is(err, os.ErrNotExist) {
		return service.AuditReport{OK: true}
	}
	if err != nil {
		return service.AuditReport{Problem: fmt.Sprintf("cannot read %s: %v", auditFileName, err)}
	}
	defer f.Close()
	v := chainVerifier{prevHash: genesisHash, digest: sha256.New()}
	if err := eachLine(f, v.check); err != nil && !errors.Is(err, errBrokenLink) {
		v.problem = fmt.Sprintf("cannot read %s after line %d: %v", auditFileName, v.lineNo, err)
	}
	return service.AuditReport{OK: v.problem == "", Entries: v.entries, Problem: v.problem}
}

// errBrokenLink stops the walk at the first bad line.
var errBrokenLink = errors.New("audit chain broken")

// chainVerifier carries the walk from one line to the next.
type chainVerifier struct {
	lineNo   int
	entries  uint32
	prevSeq  uint64
	prevHash string
	problem  string

	digest  hash.Hash // reused for every line
	scratch [64]byte  // the recomputed hash of the current line
}

func (v *chainVerifier) check(line []byte, complete bool) error {
	v.lineNo++
	if v.problem = v.problemWith(line, complete); v.problem != "" {
		return errBrokenLink
	}
	v.entries++
	return nil
}

// problemWith says what is wrong with the current line, "" if nothing, and
// on success advances the walk.
func (v *chainVerifier) problemWith(line []byte, complete bool) string {
	if !complete {
		return fmt.Sprintf("line %d: unfinished, with no newline at the end (a crash mid-write; opening the store sets it aside)", v.lineNo)
	}
	if len(line) == 0 {
		return fmt.Sprintf("line %d: empty", v.lineNo)
	}
	var keys auditKeys
	if err := decodeAuditKeys(line, &keys); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return fmt.Sprintf("line %d: not valid JSON", v.lineNo)
		}
		return fmt.Sprintf("line %d: not an audit entry (want an object with a numeric seq and string prev_hash and hash)", v.lineNo)
	}
	head, carried, ok := splitSealedLine(line)
	switch {
	case !ok:
		return v.at(keys, "hash is not the last key, as 64 lowercase hex digits")
	case carried != keys.Hash || !v.hashMatches(keys.PrevHash, head, carried):
		return v.at(keys, "hash does not match its contents (the line was altered)")
	case keys.Seq != v.prevSeq+1:
		return v.at(keys, fmt.Sprintf("seq should be %d (a line was removed, duplicated or reordered)", v.prevSeq+1))
	case keys.PrevHash != v.prevHash && v.lineNo == 1:
		return v.at(keys, "prev_hash is not the genesis hash (lines before it were removed)")
	case keys.PrevHash != v.prevHash:
		return v.at(keys, fmt.Sprintf("prev_hash does not match line %d's hash (a line was removed or reordered, or line %d was rewritten)",
			v.lineNo-1, v.lineNo-1))
	}
	v.prevSeq, v.prevHash = keys.Seq, carried
	return ""
}

// at names the current line for a problem sentence.
func (v *chainVerifier) at(keys auditKeys, why string) string {
	return fmt.Sprintf("line %d (seq %d): %s", v.lineNo, keys.Seq, why)
}

// hashMatches recomputes the current line's hash from its prev_hash and its
// unsealed bytes (head + `"}`) and compares it with the hash it carries.
func (v *chainVerifier) hashMatches(prevHash string, head []byte, carried string) bool {
	hashInto(&v.scratch, v.digest, prevHash, head, objectEnd)
	return string(v.scratch[:]) == carried
}
