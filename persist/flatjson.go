package persist

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"unicode/utf8"
)

// A fast path for reading the JSON-lines files. encoding/json spends most
// of a replay or an audit walk reflecting and re-validating; here one pass
// validates a line and hands over the raw bytes of its top-level members.
//
// The fast path only ever says "accepted" or "not sure": anything unusual
// (an escaped key, a key that differs from a field name only in case, an
// escaped or non-UTF-8 string value, a number that is not a plain integer,
// deep nesting, invalid JSON) falls back to encoding/json, which stays the
// authority. FuzzFastPath checks that whatever the fast path accepts,
// encoding/json accepts too and decodes to the same values.

// maxFastDepth bounds nesting (and so recursion) on the fast path.
const maxFastDepth = 64

// eachMember validates that line is exactly one JSON object, optionally
// surrounded by whitespace, calling member with each top-level key (the raw
// bytes between its quotes) and value (raw bytes), in order. It returns
// false if the line is not accepted or member returned false; member may
// have been called for earlier members by then.
func eachMember(line []byte, member func(key, value []byte) bool) bool {
	s := flatScanner{b: line}
	s.skipSpace()
	if s.i >= len(s.b) || s.b[s.i] != '{' || !s.object(1, member) {
		return false
	}
	s.skipSpace()
	return s.i == len(s.b)
}

type flatScanner struct {
	b []byte
	i int
}

func (s *flatScanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *flatScanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *flatScanner) value(depth int) bool {
	if s.i >= len(s.b) || depth > maxFastDepth {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.str()
	case c == '{':
		return s.object(depth, nil)
	case c == '[':
		return s.container(']', func() bool { return s.value(depth + 1) })
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || isDigit(c):
		return s.number()
	}
	return false
}

// object scans the object whose "{" is at s.i, calling member (unless nil)
// with each of its members.
func (s *flatScanner) object(depth int, member func(key, value []byte) bool) bool {
	return s.container('}', func() bool {
		keyStart := s.i
		if !s.str() {
			return false
		}
		key := s.b[keyStart+1 : s.i-1]
		s.skipSpace()
		if !s.eat(':') {
			return false
		}
		s.skipSpace()
		valueStart := s.i
		return s.value(depth+1) && (member == nil || member(key, s.b[valueStart:s.i]))
	})
}

// container scans the object or array whose opening byte is at s.i, with
// element scanning one member or element.
func (s *flatScanner) container(closing byte, element func() bool) bool {
	s.i++
	s.skipSpace()
	if s.eat(closing) {
		return true
	}
	for {
		s.skipSpace()
		if !element() {
			return false
		}
		s.skipSpace()
		if s.eat(',') {
			continue
		}
		return s.eat(closing)
	}
}

func (s *flatScanner) str() bool {
	if !s.eat('"') {
		return false
	}
	for s.i < len(s.b) {
		for s.i+8 <= len(s.b) && plainWord(binary.LittleEndian.Uint64(s.b[s.i:])) {
			s.i += 8 // the common case: titles and hashes, eight bytes a step
		}
		for s.i < len(s.b) && plainStringByte[s.b[s.i]] {
			s.i++
		}
		if s.i >= len(s.b) {
			return false
		}
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			s.i++
			if s.i >= len(s.b) {
				return false
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				if s.i+5 > len(s.b) || !isHex(s.b[s.i+1:s.i+5]) {
					return false
				}
				s.i += 5
			default:
				return false
			}
		default:
			s.i++
		}
	}
	return false
}

// plainWord reports whether all eight bytes of w are plainStringByte ones:
// none is the quote, the backslash or below 0x20. Each test is the classic
// "has a byte less than n" of (x - n·0x01…) &^ x & 0x80…, which is exact
// about whether such a byte exists (borrows only mark bytes above it); the
// quote and the backslash are the bytes that XOR to zero.
func plainWord(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote := w ^ (ones * '"')
	backslash := w ^ (ones * '\\')
	return ((quote-ones)&^quote|(backslash-ones)&^backslash|(w-ones*0x20)&^w)&highs == 0
}

// plainStringByte marks the bytes a JSON string holds as themselves: all but
// the quote, the backslash and control characters.
var plainStringByte = func() (plain [256]bool) {
	for c := 0x20; c < 256; c++ {
		plain[c] = c != '"' && c != '\\'
	}
	return plain
}()

func (s *flatScanner) literal(word string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(word)) {
		return false
	}
	s.i += len(word)
	return true
}

func (s *flatScanner) number() bool {
	s.eat('-')
	if !s.eat('0') && s.digits() == 0 {
		return false
	}
	if s.eat('.') && s.digits() == 0 {
		return false
	}
	if s.eat('e') || s.eat('E') {
		if !s.eat('+') {
			s.eat('-')
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func (s *flatScanner) digits() int {
	start := s.i
	for s.i < len(s.b) && isDigit(s.b[s.i]) {
		s.i++
	}
	return s.i - start
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHex(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) && (c|0x20 < 'a' || c|0x20 > 'f') {
			return false
		}
	}
	return true
}

// The setters below decode one raw value into a field as encoding/json
// would, or return false when only encoding/json can say. JSON null leaves
// the field alone, as encoding/json does.

func setString(raw []byte, to *string, strs *interner) bool {
	if isNull(raw) {
		return true
	}
	if len(raw) < 2 || raw[0] != '"' {
		return false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') >= 0 || !utf8.Valid(inner) {
		return false // escapes and invalid UTF-8 are rewritten by encoding/json
	}
	*to = strs.get(inner)
	return true
}

// interner shares one string among equal values: a replay sees the same
// class and title thousands of times, and one allocation each instead of
// one per event keeps a long replay out of the garbage collector. A nil
// interner just copies.
type interner struct{ seen map[string]string }

// maxInterned bounds an interner's map; values past it are copied.
const maxInterned = 16 << 10

func newInterner() *interner { return &interner{seen: map[string]string{}} }

func (in *interner) get(b []byte) string {
	if in == nil {
		return string(b)
	}
	if s, ok := in.seen[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in.seen) < maxInterned {
		in.seen[s] = s
	}
	return s
}

func setInt(raw []byte, to *int64) bool {
	if isNull(raw) {
		return true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return false
	}
	*to = n
	return true
}

func setUint(raw []byte, to *uint64) bool {
	if isNull(raw) {
		return true
	}
	n, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil {
		return false
	}
	*to = n
	return true
}

func setBool(raw []byte, to *bool) bool {
	switch string(raw) {
	case "null":
	case "true":
		*to = true
	case "false":
		*to = false
	default:
		return false
	}
	return true
}

func isNull(raw []byte) bool { return string(raw) == "null" }

// unknownKeyIsSafe reports whether a key that is not exactly one of names
// can be ignored, as encoding/json ignores keys that match no field. Only a
// decoder into a struct that lists exactly names may use it. encoding/json also
// matches keys case-insensitively (with Unicode folding) and after
// unescaping, so a key with an escape, a non-ASCII byte, or an ASCII case
// variant of a name is not safe to ignore.
func unknownKeyIsSafe(key []byte, names ...string) bool {
	for _, c := range key {
		if c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	for _, name := range names {
		if len(key) == len(name) && bytes.EqualFold(key, []byte(name)) {
			return false
		}
	}
	return true
}
