package persist

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"os"
	"strings"
	"time"

	"github.com/antidrift/antidrift/service"
)

// maxNamedBad is how many bad lines a report names one by one.
const maxNamedBad = 3

// VerifyAudit walks every line of audit.jsonl and checks that each is
// unaltered (its hash matches its bytes), in place (seq follows the previous
// line's) and linked (prev_hash is the previous line's hash). It does not
// stop at a bad line: it counts them, names the first few, and says whether
// the lines after the first bad one still chain among themselves (one
// altered line) or not (a rewritten or cut tail). Then it compares the end
// of the file with the head recorded at the last seal: a file that ends
// before it, or holds another line at its seq, is broken. A file that
// reaches past it (a crash between the append and the save of state.json)
// is fine, and the recorded head catches up.
func (s *Store) VerifyAudit() service.AuditReport {
	a := &s.audit
	a.mu.Lock()
	defer a.mu.Unlock()
	v := chainVerifier{prevHash: genesisHash, anchor: a.anchor}
	f, err := openFile(a.path, os.O_RDONLY, 0)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return service.AuditReport{Problem: fmt.Sprintf("cannot read %s: %v", auditFileName, err), Anchor: a.anchor}
	default:
		defer f.Close()
		if err := eachLineInParallel(f, newLineCheck, v.check); err != nil {
			return service.AuditReport{Problem: fmt.Sprintf("cannot read %s after line %d: %v", auditFileName, v.lineNo, err), Anchor: a.anchor}
		}
	}
	r := v.report()
	if r.OK && r.Head.Seq > a.anchor.Seq {
		a.anchor = service.AuditHead{Seq: r.Head.Seq, Hash: r.Head.Hash, SealedUnixMilli: s.now().UnixMilli()}
	}
	return r
}

// chainVerifier carries the walk from one line to the next.
type chainVerifier struct {
	lineNo   int
	entries  uint32
	prevSeq  uint64
	prevHash string
	// prevUnknown is set after a line whose seq and hash cannot be read:
	// the next line cannot be judged on its link.
	prevUnknown bool

	bad        uint32
	firstBad   []string
	badAfter   uint32 // bad lines after the first one
	afterFirst uint32 // lines after the first bad one

	anchor       service.AuditHead
	atAnchorHash string // the hash of the line with the anchor's seq, if any
	// lastSeq is the seq of the last line whose seq could be read: where
	// the file ends, even when an unreadable line (a torn tail) follows.
	lastSeq uint64
}

// lineVerdict is what an audit line says of itself, judged without its
// neighbours (so lines can be judged on several cores); the walk then
// links each to the one before, in file order.
type lineVerdict struct {
	unreadable string    // why seq and hash cannot be read, to follow "line N: "; "" if they can
	keys       auditKeys // when readable
	unsealed   string    // why the line does not verify against its own hash; "" if it does
}

// newLineCheck returns a check of audit lines, each on its own, with a
// digest of its own (eachLineInParallel runs one per worker).
func newLineCheck() func(line []byte, complete bool) lineVerdict {
	digest := sha256.New()
	var scratch [64]byte // the recomputed hash of the current line
	return func(line []byte, complete bool) lineVerdict {
		if !complete {
			return lineVerdict{unreadable: "unfinished, with no newline at the end (a crash mid-write; opening the store sets it aside)"}
		}
		if len(line) == 0 {
			return lineVerdict{unreadable: "empty"}
		}
		var verdict lineVerdict
		if err := decodeAuditKeys(line, &verdict.keys); err != nil {
			var syntax *json.SyntaxError
			if errors.As(err, &syntax) {
				return lineVerdict{unreadable: "not valid JSON"}
			}
			return lineVerdict{unreadable: "not an audit entry (want an object with a numeric seq and string prev_hash and hash)"}
		}
		head, carried, ok := splitSealedLine(line)
		switch {
		case !ok:
			verdict.unsealed = "hash is not the last key, as 64 lowercase hex digits"
		case carried != verdict.keys.Hash || !hashMatches(digest, &scratch, verdict.keys.PrevHash, head, carried):
			verdict.unsealed = "hash does not match its contents (the line was altered)"
		}
		return verdict
	}
}

func (v *chainVerifier) check(line lineVerdict) {
	v.lineNo++
	if v.bad > 0 {
		v.afterFirst++
	}
	problem := v.problemWith(line)
	if problem == "" {
		if v.bad == 0 {
			v.entries++
		}
		return
	}
	if v.bad > 0 {
		v.badAfter++
	}
	v.bad++
	if len(v.firstBad) < maxNamedBad {
		v.firstBad = append(v.firstBad, problem)
	}
}

// problemWith says what is wrong with the current line, "" if nothing. It
// always moves the walk on to this line's seq and hash as the line carries
// them, so one altered line costs one bad line, not the rest of the file.
func (v *chainVerifier) problemWith(line lineVerdict) string {
	unknownPrev := v.prevUnknown
	v.prevUnknown = true
	if line.unreadable != "" {
		return fmt.Sprintf("line %d: %s", v.lineNo, line.unreadable)
	}
	keys := line.keys
	prevSeq, prevHash := v.prevSeq, v.prevHash
	v.prevSeq, v.prevHash, v.prevUnknown = keys.Seq, keys.Hash, false
	v.lastSeq = keys.Seq
	if v.anchor.Seq != 0 && keys.Seq == v.anchor.Seq && v.atAnchorHash == "" {
		v.atAnchorHash = keys.Hash
	}
	switch {
	case line.unsealed != "":
		return v.at(keys, line.unsealed)
	case unknownPrev:
		return ""
	case keys.Seq != prevSeq+1:
		return v.at(keys, fmt.Sprintf("seq should be %d (a line was removed, duplicated or reordered)", prevSeq+1))
	case keys.PrevHash != prevHash && v.lineNo == 1:
		return v.at(keys, "prev_hash is not the genesis hash (lines before it were removed)")
	case keys.PrevHash != prevHash:
		return v.at(keys, fmt.Sprintf("prev_hash does not match line %d's hash (a line was removed or reordered, or line %d was rewritten)",
			v.lineNo-1, v.lineNo-1))
	}
	return ""
}

// report sums the walk up.
func (v *chainVerifier) report() service.AuditReport {
	r := service.AuditReport{
		Entries:    v.entries, // good lines before the first bad one
		BadLines:   v.bad,
		FirstBad:   v.firstBad,
		RestChains: v.bad > 0 && v.badAfter == 0,
		Anchor:     v.anchor,
	}
	if v.lineNo > 0 && !v.prevUnknown {
		r.Head = service.AuditHead{Seq: v.prevSeq, Hash: v.prevHash}
	}
	var sentences []string
	if v.bad > 0 {
		s := v.firstBad[0] + fmt.Sprintf(". %d of %d line(s) do not verify", v.bad, v.lineNo)
		if len(v.firstBad) > 1 {
			s += "; next " + strings.Join(v.firstBad[1:], "; ")
		}
		if v.bad > uint32(len(v.firstBad)) {
			s += fmt.Sprintf("; and %d more", v.bad-uint32(len(v.firstBad)))
		}
		switch {
		case v.afterFirst == 0:
			s += ". It is the last line"
		case r.RestChains:
			s += fmt.Sprintf(". The %d line(s) after it still chain among themselves: one line was altered, not the rest", v.afterFirst)
		default:
			s += fmt.Sprintf(". Of the %d line(s) after the first bad one, %d do not chain either: the file was rewritten, cut or spliced there", v.afterFirst, v.badAfter)
		}
		sentences = append(sentences, s)
	}
	if missing := v.missingTail(); missing != "" {
		r.MissingTail = true
		sentences = append(sentences, missing)
	}
	r.OK = len(sentences) == 0
	r.Problem = strings.Join(sentences, ". ")
	return r
}

// missingTail compares the file with the recorded head: "" when the file
// reaches it with the same line (or nothing was recorded).
func (v *chainVerifier) missingTail() string {
	a := v.anchor
	if a.Seq == 0 {
		return ""
	}
	sealed := "was sealed"
	if a.SealedUnixMilli != 0 {
		sealed += " at " + time.UnixMilli(a.SealedUnixMilli).UTC().Format("2006-01-02 15:04 UTC")
	}
	switch {
	case v.atAnchorHash == "" && v.lastSeq < a.Seq:
		ends := "is empty"
		switch {
		case v.lastSeq > 0:
			ends = fmt.Sprintf("ends at seq %d", v.lastSeq)
		case v.lineNo > 0:
			ends = "holds no line whose seq can be read"
		}
		return fmt.Sprintf("%s %s, but seq %d (hash %s…) %s: the lines after seq %d were removed or cut short",
			auditFileName, ends, a.Seq, short(a.Hash), sealed, v.lastSeq)
	case v.atAnchorHash == "":
		return fmt.Sprintf("%s has no line with seq %d, but seq %d (hash %s…) %s", auditFileName, a.Seq, a.Seq, short(a.Hash), sealed)
	case v.atAnchorHash != a.Hash:
		return fmt.Sprintf("seq %d in %s has hash %s…, but the seq %d that %s had hash %s…: the tail was rewritten",
			a.Seq, auditFileName, short(v.atAnchorHash), a.Seq, sealed, short(a.Hash))
	}
	return ""
}

// short is the first 8 hex digits of a hash, enough to name it.
func short(hash string) string { return hash[:min(len(hash), 8)] }

// at names the current line for a problem sentence.
func (v *chainVerifier) at(keys auditKeys, why string) string {
	return fmt.Sprintf("line %d (seq %d): %s", v.lineNo, keys.Seq, why)
}

// hashMatches recomputes a line's hash from its prev_hash and its unsealed
// bytes (head + `"}`), into scratch with digest, and compares it with the
// hash it carries.
func hashMatches(digest hash.Hash, scratch *[64]byte, prevHash string, head []byte, carried string) bool {
	hashInto(scratch, digest, prevHash, head, objectEnd)
	return string(scratch[:]) == carried
}
