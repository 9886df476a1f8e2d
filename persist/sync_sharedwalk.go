package persist

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/antidrift/antidrift/service"
)

// The bounded walk of a device's chain file (sync_bounds.go): the signature
// layer's walk (sync_shared.go, sync_signed.go) with a budget of signature checks, a
// walk by hash alone up to the head this machine remembers for the device
// (sync_seen.go), and every number of every line checked (sync_numbers.go).

// boundedChain is a walked chain file and what the bounds left out.
type boundedChain struct {
	signedChain
	unchecked   int   // lines past the budget of signature checks: not read
	cutBytes    int64 // bytes past the byte bounds: not read
	badNumbers  int   // signed, chaining lines whose numbers cannot be
	named       []string
	byHash      bool  // the lines up to the remembered head were checked by hash alone
	longLine    bool  // the reading stopped at a line longer than maxLineBytes
	unreadBytes int64 // bytes the reading stopped before (checks ran out, or a long line)
	bounds      ReadBounds
}

// boundedVerdict is what the bounded walk makes of one line. It is small
// (the signed line's verdict behind a pointer): a block of a file of tiny
// garbage lines holds tens of thousands of them.
type boundedVerdict struct {
	signed     *signedVerdict // nil when the line is not signed by the key
	seq        uint64         // as an unsigned line carries it, to name it
	byHash     bool           // checked by its hash alone (seq within the remembered head)
	overBudget bool           // not checked: no signature check was left
	incomplete bool
}

// newBoundedLineCheck is newSignedLineCheck taking each signature check
// from checks, and skipping it for a line whose seq is within trustUpTo
// and whose own hash holds: such a line is believed only if the walk then
// reaches the remembered head through it (checkSignedChainBounded).
func newBoundedLineCheck(pub ed25519.PublicKey, id, form string, checks *deviceChecks, trustUpTo uint64, stop *atomic.Bool) func() func(line []byte, complete bool) boundedVerdict {
	signed := newSignedLineCheck(pub, id, form)
	return func() func(line []byte, complete bool) boundedVerdict {
		check, hashOnly := signed(), newLineCheck()
		return func(line []byte, complete bool) boundedVerdict {
			if stop.Load() {
				return boundedVerdict{}
			}
			if !complete {
				return boundedVerdict{incomplete: true}
			}
			if trustUpTo > 0 {
				if body, _, ok := splitSignedLine(line); ok {
					sealed := append(append(make([]byte, 0, len(body)+1), body...), '}')
					lv := hashOnly(sealed, true)
					if lv.unreadable == "" && lv.unsealed == "" && lv.keys.Seq > 0 && lv.keys.Seq <= trustUpTo {
						v := &signedVerdict{signed: true, lineVerdict: lv, seq: lv.keys.Seq}
						v.parsed = json.Unmarshal(sealed, &v.sum) == nil
						return boundedVerdict{signed: v, byHash: true}
					}
				}
			}
			if !checks.take() {
				return boundedVerdict{overBudget: true}
			}
			v := check(line, true)
			if !v.signed {
				return boundedVerdict{seq: v.seq}
			}
			return boundedVerdict{signed: &v}
		}
	}
}

// checkSignedChainBounded walks src as checkSignedChain does, within
// checks. With a remembered head it first walks by hash alone up to it:
// when every line to it chains and the line there has its remembered
// hash, they are the very lines this machine checked the signatures of
// before (the hash of each commits to every line before it). Anything
// else (a line inserted, altered, removed) and the file is walked again,
// every signature checked.
func checkSignedChainBounded(src chainSource, pub ed25519.PublicKey, id, form string, checks *deviceChecks, head SeenHead) boundedChain {
	if head.Seq > 0 {
		if c, ok := walkBounded(src, pub, id, form, checks, head); ok {
			return c
		}
	}
	c, _ := walkBounded(src, pub, id, form, checks, SeenHead{})
	return c
}

func walkBounded(src chainSource, pub ed25519.PublicKey, id, form string, checks *deviceChecks, head SeenHead) (c boundedChain, ok bool) {
	v := chainVerifier{prevHash: genesisHash}
	anchored, over := head.Seq == 0, false
	var again atomic.Bool // the walk by hash failed: the rest is not looked at
	// The reading stops as soon as nothing more of the file can count: the
	// walk by hash failed (it is walked again), or the checks ran out.
	var stop atomic.Bool
	in := &stoppable{r: src.open(), stop: &stop}
	err := eachLineInParallel(in, newBoundedLineCheck(pub, id, form, checks, head.Seq, &again), func(bv boundedVerdict) {
		if again.Load() {
			stop.Store(true)
			return
		}
		if over {
			c.unchecked++
			return
		}
		if bv.byHash && anchored || !bv.byHash && !anchored {
			// A line by hash after the head, or one that needed its
			// signature before it: the lines are not the ones checked.
			if head.Seq > 0 {
				again.Store(true)
				return
			}
		}
		if bv.overBudget {
			over = true
			stop.Store(true)
			c.unchecked++
			return
		}
		if bv.incomplete && (src.cut() > 0 || in.stopped) {
			return // the line a bound cut: said with the bound
		}
		c.lines++
		if bv.signed == nil {
			c.unsigned++
			name := fmt.Sprintf("line %d", c.lines)
			if bv.seq > 0 {
				name += fmt.Sprintf(" (seq %d)", bv.seq)
			}
			if c.firstUnsigned == "" {
				c.firstUnsigned = name
			}
			if len(c.namedUnsigned) < maxNamedBad {
				c.namedUnsigned = append(c.namedUnsigned, name)
			}
			return
		}
		v.lineNo = c.lines - 1
		sv := bv.signed
		v.check(sv.lineVerdict)
		if bv.byHash && (v.bad > 0 || sv.keys.Seq == head.Seq && sv.keys.Hash != head.Hash) {
			again.Store(true)
			return
		}
		if bv.byHash && sv.keys.Seq == head.Seq {
			anchored = true
		}
		if v.bad > 0 {
			return
		}
		problem := ""
		if !sv.parsed {
			problem = "its figures do not parse (a number out of range, or of the wrong type)"
		} else {
			problem = NumbersProblem(sv.sum)
		}
		if problem != "" {
			c.badNumbers++
			if len(c.named) < maxNamedBad {
				c.named = append(c.named, fmt.Sprintf("line %d (seq %d): %s", c.lines, sv.keys.Seq, problem))
			}
			return
		}
		c.summaries = append(c.summaries, sv.sum)
	})
	if again.Load() || !anchored {
		return c, false // not the lines checked before, or it ends before the head
	}
	c.chain = v.report()
	if err != nil {
		c.chain, c.summaries = service.AuditReport{Problem: err.Error()}, nil
	}
	c.cutBytes = src.cut()
	c.longLine = in.long
	if in.stopped {
		c.unreadBytes = src.size() - in.n
	}
	c.byHash = head.Seq > 0
	if checks != nil {
		c.bounds = checks.b
	}
	return c, true
}

// boundsProblem says what the bounds and the number checks left out of a
// walked chain file, "" when nothing.
func boundsProblem(who, file string, c boundedChain) string {
	var out []string
	if c.badNumbers > 0 {
		named := strings.Join(c.named, "; ")
		if c.badNumbers > len(c.named) {
			named += fmt.Sprintf("; and %d more", c.badNumbers-len(c.named))
		}
		out = append(out, fmt.Sprintf("%s: %d line(s) of its %s carry figures that cannot be (%s); they are left out of every figure. That machine wrote them signed: run antidrift verify there",
			who, c.badNumbers, file, named))
	}
	if c.longLine {
		out = append(out, fmt.Sprintf("%s: its %s holds a line longer than %s, which no machine writes; the reading stopped there, and the %s from it on are left out",
			who, file, sizeOf(maxLineBytes), sizeOf(c.unreadBytes)))
	}
	if c.unchecked > 0 || c.cutBytes > 0 {
		what := []string{}
		if c.unchecked > 0 {
			what = append(what, fmt.Sprintf("the reading stopped where its signature checks ran out (%d a device, %d in all, shared between the devices read), so %d line(s) and the %s after them",
				c.bounds.DeviceChecks, c.bounds.TotalChecks, c.unchecked, sizeOf(c.unreadBytes)))
		}
		if c.cutBytes > 0 {
			what = append(what, fmt.Sprintf("the %s past the bound on bytes read (%s a device, %s in all, shared between the devices read)", sizeOf(c.cutBytes), sizeOf(c.bounds.DeviceBytes), sizeOf(c.bounds.TotalBytes)))
		}
		out = append(out, fmt.Sprintf("%s: its %s is larger than this machine reads at once: %s are left out (the sessions before them count). A real record this large is decades of sessions: look at that machine's folder",
			who, file, strings.Join(what, "; and ")))
	}
	return strings.Join(out, ". ")
}

func sizeOf(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// maxLineBytes bounds one published line: a session's summary is a few
// KiB at most, titles and all.
const maxLineBytes = 1 << 20

// stoppable reads r until stop is set, or until a line runs longer than
// maxLineBytes: then it ends as if the file did, so a walk reads no more
// of a file than can count.
type stoppable struct {
	r       io.Reader
	stop    *atomic.Bool
	n       int64 // bytes read
	run     int   // bytes since the last newline
	long    bool
	stopped bool
}

func (s *stoppable) Read(p []byte) (int, error) {
	if s.stop.Load() || s.long {
		s.stopped = true
		return 0, io.EOF
	}
	n, err := s.r.Read(p)
	if i := bytes.LastIndexByte(p[:n], '\n'); i >= 0 {
		// Each line that ends in p: the first began before it.
		for rest, before := p[:i+1], s.run; len(rest) > 0; before = 0 {
			j := bytes.IndexByte(rest, '\n')
			if before+j > maxLineBytes {
				s.long = true
			}
			rest = rest[j+1:]
		}
		s.run = n - i - 1
	} else {
		s.run += n
	}
	if s.run > maxLineBytes {
		s.long = true
	}
	s.n += int64(n)
	return n, err
}
