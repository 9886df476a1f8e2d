package persist

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/antidrift/antidrift/service"
)

// The layout of sync_dir (docs/sync.md says it for other tools):
//
//	<sync_dir>/antidrift-v1/<device-id>/device.json   who publishes here, in what form
//	<sync_dir>/antidrift-v1/<device-id>/chain.jsonl   sync_titles = true: audit.jsonl's sealed lines, byte for byte
//	<sync_dir>/antidrift-v1/<device-id>/totals.jsonl  sync_titles = false: the same sessions with window titles
//	                                                  taken out, a hash chain of its own
//
// The version is in two places: the folder's name (a later layout is a
// new folder, antidrift-v2, which this reader never opens) and
// device.json's "layout" (a folder of this name written by a later
// version is said to be unreadable, never read as if it were this one).
// Each device writes only its own folder, and only one file of it at a
// time, each atomically; nothing else from the state directory goes there.
const (
	LayoutVersion    = 1
	LayoutFolder     = "antidrift-v1"
	PublishedDevice  = "device.json"
	PublishedChain   = "chain.jsonl"
	PublishedTotals  = "totals.jsonl"
	formChain        = "chain"
	formTotals       = "totals"
	maxPublishedFile = 64 << 20 // a reader takes no more of one file: decades of sessions
)

// publishedDevice is device.json. Its head and entries are what the
// publisher wrote; a reader believes the chain file's own verification,
// never these.
type publishedDevice struct {
	Layout        int    `json:"layout"`
	DeviceID      string `json:"device_id"`
	DeviceName    string `json:"device_name"`
	Form          string `json:"form"` // "chain" or "totals"
	File          string `json:"file"` // chain.jsonl or totals.jsonl
	Entries       int    `json:"entries"`
	HeadSeq       uint64 `json:"head_seq"`
	HeadHash      string `json:"head_hash"`
	PublishedUnix int64  `json:"published_unix"`
	// SourceOK and SourceProblem are the publisher's own verification of
	// audit.jsonl: a totals copy cannot show an altered source line, so
	// the publisher says it.
	SourceOK      bool   `json:"source_ok"`
	SourceProblem string `json:"source_problem"`
}

// totalsOf is sum as a totals copy holds it: each window class's time in
// one bucket with no title. The reserved buckets (away, no evidence: an
// empty class) keep their titles, which are labels, not windows.
func totalsOf(sum service.Summary) service.Summary {
	var out []service.Bucket
	at := map[string]int{}
	for _, b := range sum.Buckets {
		if b.Class == "" {
			out = append(out, b)
			continue
		}
		if i, ok := at[b.Class]; ok {
			out[i].Seconds += b.Seconds
			continue
		}
		at[b.Class] = len(out)
		out = append(out, service.Bucket{Class: b.Class, Seconds: b.Seconds})
	}
	// Longest first, as the chain's own buckets are; ties keep their order.
	slices.SortStableFunc(out, func(a, b service.Bucket) int { return cmp.Compare(b.Seconds, a.Seconds) })
	sum.Buckets = out
	return sum
}

// publishedForm is what a device publishes of its chain (the complete
// lines of audit.jsonl): with titles the lines themselves, else a totals
// chain, one line per source line, sealed by the audit hash rule from the
// genesis hash. It stops at the first source line that does not parse as
// a summary, and says so in problem.
func publishedForm(source []byte, titles bool) (out []byte, entries int, head service.AuditHead, problem string) {
	if end := bytes.LastIndexByte(source, '\n'); end >= 0 {
		source = source[:end+1]
	} else {
		source = nil
	}
	if titles {
		err := eachLine(bytes.NewReader(source), func(line []byte, complete bool) error {
			var k auditKeys
			if complete && decodeAuditKeys(line, &k) == nil {
				head = service.AuditHead{Seq: k.Seq, Hash: k.Hash}
			}
			entries++
			return nil
		})
		if err != nil {
			problem = err.Error()
		}
		return source, entries, head, problem
	}
	var b bytes.Buffer
	prevSeq, prevHash := uint64(0), genesisHash
	n := 0
	_ = eachLine(bytes.NewReader(source), func(line []byte, complete bool) error {
		n++
		if problem != "" {
			return nil
		}
		var sum service.Summary
		if err := json.Unmarshal(line, &sum); err != nil {
			problem = fmt.Sprintf("line %d of %s does not parse, so the totals copy stops before it", n, auditFileName)
			return nil
		}
		sealedLine, sealed, err := sealSummary(totalsOf(sum), prevSeq, prevHash)
		if err != nil {
			problem = err.Error()
			return nil
		}
		b.Write(sealedLine)
		prevSeq, prevHash = sealed.Seq, sealed.Hash
		head = service.AuditHead{Seq: sealed.Seq, Hash: sealed.Hash}
		entries++
		return nil
	})
	return b.Bytes(), entries, head, problem
}
