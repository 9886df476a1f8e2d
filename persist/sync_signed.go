package persist

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
)

// The signature layer of layout 2 (docs/sync.md). Every line a device
// publishes is its sealed chain line with one more key at the end, after
// hash:
//
//	{"seq":1,…,"hash":"<64 hex>","sig":"<86 base64 characters>"}
//
// sig is the Ed25519 signature, unpadded standard base64, of
//
//	"antidrift-v2 line\n" + device id + "\n" + form + "\n" + the sealed line
//
// where the sealed line is the published one with `,"sig":"…"` taken out:
// exactly the line audit.jsonl holds (chain form) or the totals chain's line
// (totals form), which the hash rule checks as before. The signature covers
// the line's hash, and so every line before it. device.json is signed
// likewise, over its own bytes with the sig value emptied (`"sig":""}`),
// behind the prefix "antidrift-v2 device.json\n".

var (
	sigKey          = []byte(`,"sig":"`)
	unsignedSigTail = []byte(`"sig":""}`)
	lineSigDomain   = "antidrift-v2 line\n"
	deviceSigDomain = "antidrift-v2 device.json\n"
)

// sigChars is the length of a signature in unpadded base64.
var sigChars = base64.RawStdEncoding.EncodedLen(ed25519.SignatureSize)

// lineMessage is what a published line's signature signs.
func lineMessage(deviceID, form string, sealed ...[]byte) []byte {
	n := len(lineSigDomain) + len(deviceID) + len(form) + 2
	for _, p := range sealed {
		n += len(p)
	}
	msg := make([]byte, 0, n)
	msg = append(msg, lineSigDomain...)
	msg = append(msg, deviceID...)
	msg = append(msg, '\n')
	msg = append(msg, form...)
	msg = append(msg, '\n')
	for _, p := range sealed {
		msg = append(msg, p...)
	}
	return msg
}

// signLine turns a sealed line (no newline; it ends in `"}`) into the
// published line, with no newline either.
func signLine(key ed25519.PrivateKey, deviceID, form string, sealed []byte) []byte {
	sig := ed25519.Sign(key, lineMessage(deviceID, form, sealed))
	out := make([]byte, 0, len(sealed)+len(sigKey)+sigChars+1)
	out = append(out, sealed[:len(sealed)-1]...)
	out = append(out, sigKey...)
	out = base64.RawStdEncoding.AppendEncode(out, sig)
	return append(out, objectEnd...)
}

// splitSignedLine finds a published line's signature: the line must end in
// `,"sig":"<86 base64>"}`. body is the line up to the `,"sig":"`, so body +
// "}" is the sealed line.
func splitSignedLine(line []byte) (body, sig []byte, ok bool) {
	tail := len(sigKey) + sigChars + len(objectEnd)
	if len(line) < tail+1 || !bytes.HasSuffix(line, objectEnd) {
		return nil, nil, false
	}
	at := len(line) - tail
	if !bytes.Equal(line[at:at+len(sigKey)], sigKey) {
		return nil, nil, false
	}
	sig, err := base64.RawStdEncoding.DecodeString(string(line[at+len(sigKey) : len(line)-len(objectEnd)]))
	if err != nil || len(sig) != ed25519.SignatureSize {
		return nil, nil, false
	}
	return line[:at], sig, true
}

// signedBy reports whether a published line carries pub's signature for
// deviceID and form, and returns its sealed line (freshly allocated).
func signedBy(pub ed25519.PublicKey, deviceID, form string, line []byte) (sealed []byte, ok bool) {
	body, sig, ok := splitSignedLine(line)
	if !ok || len(pub) != ed25519.PublicKeySize {
		return nil, false
	}
	sealed = append(append(make([]byte, 0, len(body)+1), body...), '}')
	if !ed25519.Verify(pub, lineMessage(deviceID, form, sealed), sig) {
		return nil, false
	}
	return sealed, true
}

// signDeviceFile signs device.json's encoding, which must end in
// `"sig":""}`: the signature goes in that value.
func signDeviceFile(key ed25519.PrivateKey, unsigned []byte) []byte {
	sig := ed25519.Sign(key, append([]byte(deviceSigDomain), unsigned...))
	head := unsigned[:len(unsigned)-len(objectEnd)]
	out := append(make([]byte, 0, len(unsigned)+sigChars), head...)
	out = base64.RawStdEncoding.AppendEncode(out, sig)
	return append(out, objectEnd...)
}

// deviceFileSignedBy reports whether device.json's bytes (without the
// newline) end in `"sig":"<86 base64>"}` holding pub's signature of the
// same bytes with that value emptied.
func deviceFileSignedBy(pub ed25519.PublicKey, meta []byte) bool {
	meta = bytes.TrimSuffix(meta, []byte("\n"))
	tail := len(`"sig":"`) + sigChars + len(objectEnd)
	if len(meta) < tail || len(pub) != ed25519.PublicKeySize || !bytes.HasSuffix(meta, objectEnd) {
		return false
	}
	at := len(meta) - tail
	if !bytes.Equal(meta[at:at+len(`"sig":"`)], unsignedSigTail[:len(`"sig":"`)]) {
		return false
	}
	sig, err := base64.RawStdEncoding.DecodeString(string(meta[at+len(`"sig":"`) : len(meta)-len(objectEnd)]))
	if err != nil || len(sig) != ed25519.SignatureSize {
		return false
	}
	unsigned := append(append([]byte(deviceSigDomain), meta[:at]...), unsignedSigTail...)
	return ed25519.Verify(pub, unsigned, sig)
}
