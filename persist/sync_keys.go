package persist

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// pinsFileName is where a machine keeps the key it pinned for each other
// device: the public key a device's folder carried the first time this
// machine read it. Thereafter a line in that folder counts only when that
// key signed it. The file is append-only, one JSON object a line, so any
// reader (the daemon, antidrift report, verify, history) may pin without a
// lock and no pin is ever lost to a concurrent write:
//
//	{"version":1,"event":"pin","device_id":…,"public_key":…,"at_unix":…}
//	{"version":1,"event":"forget","device_id":…,"at_unix":…}
//
// A device's pin is the first "pin" line after its last "forget" line
// (antidrift forget-key). It is never pruned because a folder is gone: a
// folder deleted and made again must meet the same key.
const pinsFileName = "device-keys.jsonl"

// pinsVersion is each line's "version"; a line of a later one is left
// alone (its device is not re-pinned over it) and named.
const pinsVersion = 1

// maxPinsFile bounds the pins file a reader takes: tens of thousands of
// pins, far beyond any person's machines.
const maxPinsFile = 4 << 20

// maxPins bounds the devices a state directory keeps a key for. A machine
// gone bad can make new device folders without end, each pinned on first
// sight: past this many, a new device is trusted for the one reading only
// (and said to be), so the pins file stays small and the keys pinned
// first are never pushed out.
const maxPins = 256

type pinLine struct {
	Version   int    `json:"version"`
	Event     string `json:"event"` // "pin" or "forget"
	DeviceID  string `json:"device_id"`
	PublicKey string `json:"public_key,omitempty"`
	AtUnix    int64  `json:"at_unix"`
}

// Pin is the key pinned for one device.
type Pin struct {
	Key        ed25519.PublicKey
	PinnedUnix int64
}

// Trust is what a reader holds each device folder to: this machine's own
// key for its own folder, the pinned key for every other. LoadTrust makes
// one per read of sync_dir.
type Trust struct {
	dir     string // the state directory ("": pins are neither read nor written)
	ownID   string
	own     ed25519.PublicKey
	pins    map[string]Pin
	blocked map[string]bool // devices with a pin line of a later version
	now     func() time.Time
	// Problem says what is wrong with the pins file, "" when nothing is.
	Problem string
}

// LoadTrust reads the state directory's device id, its public key and the
// pinned keys. A directory without them trusts nothing yet.
func LoadTrust(stateDir string) *Trust {
	t := &Trust{dir: stateDir, pins: map[string]Pin{}, blocked: map[string]bool{}, now: time.Now}
	if stateDir == "" {
		return t
	}
	r := NewReader(stateDir)
	t.ownID, t.own = r.DeviceID(), r.PublicKey()
	f, err := openFile(filepath.Join(stateDir, pinsFileName), os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return t
	}
	if err != nil {
		t.Problem = fmt.Sprintf("%s cannot be read (%v): no device's pinned key is known, so every copy in sync_dir is read as if seen for the first time", pinsFileName, err)
		return t
	}
	defer f.Close()
	n, bad := 0, 0
	_ = eachLine(io.LimitReader(f, maxPinsFile), func(line []byte, complete bool) error {
		n++
		var p pinLine
		if !complete || json.Unmarshal(line, &p) != nil || !IsDeviceID(p.DeviceID) {
			bad++
			return nil
		}
		if p.Version != pinsVersion {
			t.blocked[p.DeviceID] = true
			return nil
		}
		switch p.Event {
		case "forget":
			delete(t.pins, p.DeviceID)
		case "pin":
			key, err := base64.StdEncoding.DecodeString(p.PublicKey)
			if err != nil || len(key) != ed25519.PublicKeySize {
				bad++
			} else if _, ok := t.pins[p.DeviceID]; !ok {
				t.pins[p.DeviceID] = Pin{Key: key, PinnedUnix: p.AtUnix}
			}
		default:
			bad++
		}
		return nil
	})
	if bad > 0 {
		t.Problem = fmt.Sprintf("%d of the %d line(s) of %s in the state directory cannot be read; the devices they named may be pinned anew. Look at the file", bad, n, pinsFileName)
	}
	return t
}

// OwnID is this machine's device id, "" when it has none yet.
func (t *Trust) OwnID() string { return t.ownID }

// Pinned is the key pinned for device id.
func (t *Trust) Pinned(id string) (Pin, bool) {
	p, ok := t.pins[id]
	return p, ok
}

// pin records key for id, first seen now: appended to the pins file (one
// write, fsynced) and remembered for the rest of this read.
func (t *Trust) pin(id string, key ed25519.PublicKey) error {
	p := Pin{Key: key, PinnedUnix: t.now().Unix()}
	full := len(t.pins) >= maxPins
	t.pins[id] = p
	if t.dir == "" {
		return errors.New("no state directory to keep it in")
	}
	if full {
		return fmt.Errorf("this machine already keeps the keys of %d devices, the most it keeps: a machine gone bad may be making device folders in sync_dir; delete the ones no machine of yours wrote, and antidrift forget-key each of them", maxPins)
	}
	return appendPinLine(t.dir, pinLine{Version: pinsVersion, Event: "pin", DeviceID: id,
		PublicKey: base64.StdEncoding.EncodeToString(key), AtUnix: p.PinnedUnix})
}

// ForgetKey forgets the key pinned for device id in the state directory
// dir, so the key its folder carries next is pinned as if first seen: how
// a machine that really was reinstalled (a new key) is paired again. It
// returns the key that was pinned, nil when none was.
func ForgetKey(dir, id string) (ed25519.PublicKey, error) {
	if !IsDeviceID(id) {
		return nil, fmt.Errorf("%q is not a device id", id)
	}
	old, _ := LoadTrust(dir).Pinned(id)
	if err := appendPinLine(dir, pinLine{Version: pinsVersion, Event: "forget", DeviceID: id, AtUnix: time.Now().Unix()}); err != nil {
		return nil, err
	}
	return old.Key, nil
}

// appendPinLine appends one line to the pins file in one write and
// fsyncs it. A failed write is not cut back (another reader may have
// appended after it): a torn line reads as one bad line.
func appendPinLine(dir string, p pinLine) error {
	if _, err := os.Stat(dir); err != nil {
		return err
	}
	data, _ := json.Marshal(p)
	f, err := openAppend(nil, filepath.Join(dir, pinsFileName))
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(append(data, '\n')); err != nil {
		return err
	}
	return f.Sync()
}

// keyFor is the key device folder id is held to, and how a person names
// where it comes from. first is set when no key is pinned yet: then the
// folder's own key is pinned, and pinned says so.
func (t *Trust) keyFor(id string, carried ed25519.PublicKey) (want ed25519.PublicKey, mismatch, pinned string) {
	if id == t.ownID && t.ownID != "" {
		if t.own == nil {
			return nil, "it is this machine's device id, but this machine's signing key (device-key.json in the state directory) cannot be read, so nothing in it can be checked", ""
		}
		if !bytes.Equal(t.own, carried) {
			return t.own, fmt.Sprintf("it is this machine's folder, but its device.json carries key %s, not this machine's (%s): this machine did not write it", Fingerprint(carried), Fingerprint(t.own)), ""
		}
		return t.own, "", ""
	}
	if t.blocked[id] {
		return nil, fmt.Sprintf("%s pins its key in a later format, which this antidrift cannot read. Update antidrift on this machine", pinsFileName), ""
	}
	if p, ok := t.pins[id]; ok {
		if !bytes.Equal(p.Key, carried) {
			return p.Key, fmt.Sprintf("its device.json carries key %s, but key %s was pinned for it on %s: not the machine this one paired with (a forgery, or that machine was reinstalled). If it really was reinstalled, run antidrift forget-key %s here to pair with its new key",
				Fingerprint(carried), Fingerprint(p.Key), time.Unix(p.PinnedUnix, 0).UTC().Format("2006-01-02 15:04 UTC"), id), ""
		}
		return p.Key, "", ""
	}
	pinned = fmt.Sprintf("first seen here: its key %s is now pinned, and from now on a line in its folder counts only when that key signed it", Fingerprint(carried))
	if err := t.pin(id, carried); err != nil {
		pinned = fmt.Sprintf("first seen here, with key %s; it could not be pinned (%v), so it is trusted for this reading only", Fingerprint(carried), err)
	}
	return carried, "", pinned
}
