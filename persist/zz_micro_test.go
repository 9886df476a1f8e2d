package persist

import (
	"crypto/sha256"
	"encoding/json"
	"testing"
)

func microLine(b *testing.B) []byte {
	line, _, _ := sealSummary(sampleSummary(1), 0, genesisHash)
	return line[:len(line)-1]
}
func BenchmarkZZScan(b *testing.B) {
	l := microLine(b); b.SetBytes(int64(len(l)))
	for b.Loop() { eachMember(l, func(k, v []byte) bool { return true }) }
}
func BenchmarkZZValid(b *testing.B) {
	l := microLine(b); b.SetBytes(int64(len(l)))
	for b.Loop() { json.Valid(l) }
}
func BenchmarkZZSha(b *testing.B) {
	l := microLine(b); b.SetBytes(int64(len(l)))
	for b.Loop() { sha256.Sum256(l) }
}
func BenchmarkZZKeys(b *testing.B) {
	l := microLine(b); b.SetBytes(int64(len(l)))
	for b.Loop() { var k auditKeys; decodeAuditKeys(l, &k) }
}
func BenchmarkZZCheck(b *testing.B) {
	l := microLine(b); b.SetBytes(int64(len(l)))
	for b.Loop() { v := chainVerifier{prevHash: genesisHash}; v.check(l, true) }
}
