package persist

import (
	"bytes"
	"cmp"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/antidrift/antidrift/service"
)

// The layout of sync_dir (docs/sync.md says it for other tools):
//
//	<sync_dir>/antidrift-v2/<device-id>/device.json   who publishes here, in what form, with which key (signed)
//	<sync_dir>/antidrift-v2/<device-id>/chain.jsonl   sync_titles = true: audit.jsonl's sealed lines, each signed
//	<sync_dir>/antidrift-v2/<device-id>/totals.jsonl  sync_titles = false: the same sessions with window titles
//	                                                  taken out, a hash chain of its own, each line signed
//
// The version is in two places: the folder's name (a later layout is a
// new folder, antidrift-v3, which this reader never opens) and
// device.json's "layout" (a folder of this name written by a later
// version is said to be unreadable, never read as if it were this one).
// Layout 1 (antidrift-v1) had no signatures: it is named, never read.
// Each device writes only its own folder, and only one file of it at a
// time, each atomically; nothing else from the state directory goes there.
const (
	LayoutVersion    = 2
	LayoutFolder     = "antidrift-v2"
	unsignedLayout   = "antidrift-v1" // layout 1, before signatures
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
	// PublicKey is the device's Ed25519 public key (base64); Sig, the last
	// key, signs the file's own bytes with it (sync_signed.go).
	PublicKey string `json:"public_key"`
	Sig       string `json:"sig"`
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
// lines of audit.jsonl), each line signed with key for device id: with
// titles the lines themselves, else a totals chain, one line per source
// line, sealed by the audit hash rule from the genesis hash. It stops at
// the first source line that does not parse as a summary (totals) or
// cannot carry a signature (chain), and says so in problem.
func publishedForm(source []byte, titles bool, key ed25519.PrivateKey, id string) (out []byte, entries int, head service.AuditHead, problem string) {
	if end := bytes.LastIndexByte(source, '\n'); end >= 0 {
		source = source[:end+1]
	} else {
		source = nil
	}
	var b bytes.Buffer
	if titles {
		n := 0
		_ = eachLine(bytes.NewReader(source), func(line []byte, complete bool) error {
			n++
			if problem != "" {
				return nil
			}
			if !bytes.HasSuffix(line, objectEnd) {
				problem = fmt.Sprintf("line %d of %s is not a sealed line (it does not end in \"}), so the copy stops before it", n, auditFileName)
				return nil
			}
			var k auditKeys
			if decodeAuditKeys(line, &k) == nil {
				head = service.AuditHead{Seq: k.Seq, Hash: k.Hash}
			}
			b.Write(maybeSign(key, id, formChain, line))
			b.WriteByte('\n')
			entries++
			return nil
		})
		return b.Bytes(), entries, head, problem
	}
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
		b.Write(maybeSign(key, id, formTotals, sealedLine[:len(sealedLine)-1]))
		b.WriteByte('\n')
		prevSeq, prevHash = sealed.Seq, sealed.Hash
		head = service.AuditHead{Seq: sealed.Seq, Hash: sealed.Hash}
		entries++
		return nil
	})
	return b.Bytes(), entries, head, problem
}

// maybeSign is signLine, or the sealed line itself with no key (a reader
// comparing hashes only).
func maybeSign(key ed25519.PrivateKey, id, form string, sealed []byte) []byte {
	if key == nil {
		return sealed
	}
	return signLine(key, id, form, sealed)
}
