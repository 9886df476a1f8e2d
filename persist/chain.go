package persist

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash"
	"strings"

	"github.com/antidrift/antidrift/service"
)

// The audit chain's line format and hash rule. Each line of audit.jsonl is a
// JSON object whose last key is "hash". Its hash is the lowercase hex
// SHA-256 of the previous line's hash (64 ASCII hex digits; genesisHash for
// the first line) followed by the line's exact bytes with the hash value
// emptied (ending in `"hash":""}`), newline excluded. Hashing bytes rather
// than re-encoded fields means a line verifies whatever its key order,
// escaping or extra keys, so lines written by a later version still check.

// genesisHash is the prev_hash of the first line.
var genesisHash = strings.Repeat("0", 64)

var (
	hashKey          = []byte(`"hash":"`)
	unsealedHashTail = []byte(`"hash":""}`)
	objectEnd        = []byte(`"}`)
)

// chainHash applies the hash rule to prevHash and the unsealed line.
func chainHash(prevHash string, unsealed []byte) string {
	var hexHash [64]byte
	hashInto(&hexHash, sha256.New(), prevHash, unsealed)
	return string(hexHash[:])
}

// hashInto applies the hash rule with digest h (reset first) and writes the
// hash as lowercase hex into out. The unsealed line comes in consecutive
// pieces so a verifier can hash a line in place, and h and out are the
// caller's so a walk over many lines allocates nothing per line.
func hashInto(out *[64]byte, h hash.Hash, prevHash string, unsealed ...[]byte) {
	h.Reset()
	h.Write([]byte(prevHash))
	for _, piece := range unsealed {
		h.Write(piece)
	}
	var sum [sha256.Size]byte
	hex.Encode(out[:], h.Sum(sum[:0]))
}

// sealSummary assigns sum its place after prevSeq/prevHash and returns the
// audit line to append (with its "\n") and the summary as written.
func sealSummary(sum service.Summary, prevSeq uint64, prevHash string) ([]byte, service.Summary, error) {
	sum.Seq = prevSeq + 1
	sum.PrevHash = prevHash
	sum.Hash = ""
	if sum.Buckets == nil {
		sum.Buckets = []service.Bucket{} // [] not null: one spelling of "none"
	}
	unsealed, err := json.Marshal(sum)
	if err != nil {
		return nil, sum, err
	}
	if !bytes.HasSuffix(unsealed, unsealedHashTail) {
		return nil, sum, errors.New("persist: service.Summary no longer encodes hash as its last key; the audit format needs it last")
	}
	sum.Hash = chainHash(prevHash, unsealed)
	head := unsealed[:len(unsealed)-len(objectEnd)]
	line := make([]byte, 0, len(unsealed)+len(sum.Hash)+1)
	line = append(line, head...)
	line = append(line, sum.Hash...)
	line = append(line, objectEnd...)
	line = append(line, '\n')
	return line, sum, nil
}

// splitSealedLine finds a line's hash: the value of the last `"hash":"`,
// which must be 64 lowercase hex digits closing the object. head is the line
// up to and including `"hash":"`, so head + `"}` is the unsealed line.
//
// The last `"hash":"` is followed by exactly that iff the line ends in
// `"hash":"<64 hex>"}` (the hex digits hold no quote), so the check looks at
// the end of the line only.
func splitSealedLine(line []byte) (head []byte, hash string, ok bool) {
	if len(line) < len(hashKey)+64+len(objectEnd) || !bytes.HasSuffix(line, objectEnd) {
		return nil, "", false
	}
	end := len(line) - 64 - len(objectEnd)
	digits := line[end : end+64]
	if !bytes.HasSuffix(line[:end], hashKey) || !isLowerHex(digits) {
		return nil, "", false
	}
	return line[:end], string(digits), true
}

func isLowerHex(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
