package persist

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// deviceKeyFileName holds this machine's signing key: an Ed25519 key made
// once, the first time the daemon publishes to sync_dir, and never changed
// by it after. Its public half is in the device's folder in sync_dir
// (device.json's public_key); every line published there is signed with
// it, and the other machines hold the folder to it (sync_keys.go).
const deviceKeyFileName = "device-key.json"

// deviceKeyVersion is device-key.json's "version". A file with a larger
// one was written by a later antidrift: it is refused, never overwritten.
const deviceKeyVersion = 1

type deviceKeyFile struct {
	Version     int    `json:"version"`
	Algorithm   string `json:"algorithm"`  // "ed25519"
	Seed        string `json:"seed"`       // the 32-byte private seed, base64
	PublicKey   string `json:"public_key"` // base64, for a person to compare with device.json
	CreatedUnix int64  `json:"created_unix"`
}

// decodeDeviceKey reads device-key.json's bytes: the key, or why not.
// later is set when the file is of a later version (not damaged: newer).
func decodeDeviceKey(data []byte) (key ed25519.PrivateKey, later bool, why string) {
	var f deviceKeyFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, false, "is not valid JSON"
	}
	if f.Version > deviceKeyVersion {
		return nil, true, fmt.Sprintf("is of version %d, written by a later antidrift (this one reads version %d)", f.Version, deviceKeyVersion)
	}
	seed, err := base64.StdEncoding.DecodeString(f.Seed)
	if f.Version != deviceKeyVersion || f.Algorithm != "ed25519" || err != nil || len(seed) != ed25519.SeedSize {
		return nil, false, "holds no ed25519 key of version 1"
	}
	key = ed25519.NewKeyFromSeed(seed)
	if f.PublicKey != base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey)) {
		return nil, false, "holds a public key that is not its seed's"
	}
	return key, false, ""
}

// DeviceKey is this state directory's signing key, made (atomically,
// 0600, never through a link) when there is none. A damaged file is set
// aside and a new key made: every other machine then leaves this one's
// copy out until it is re-paired there, and problem says so. A file
// written by a later antidrift is an error, and stays as it is.
func (s *Store) DeviceKey() (key ed25519.PrivateKey, problem string, err error) {
	path := filepath.Join(s.dir, deviceKeyFileName)
	data, err := ReadStateFile(path)
	switch {
	case err == nil:
		key, later, why := decodeDeviceKey(data)
		if key != nil {
			return key, "", nil
		}
		if later {
			return nil, "", fmt.Errorf("%s %s: update antidrift on this machine; nothing is signed or published until then", deviceKeyFileName, why)
		}
		moved, serr := s.setAside(path, "damaged")
		if serr != nil {
			return nil, "", fmt.Errorf("%s %s and could not be set aside: %w", deviceKeyFileName, why, serr)
		}
		problem = fmt.Sprintf("%s %s (set aside as %s); this machine has a new signing key, so every other machine leaves its copy in sync_dir out until it is re-paired there: run antidrift forget-key %s on each of them (docs/sync.md)",
			deviceKeyFileName, why, filepath.Base(moved), s.deviceIDOrThis())
	case !errors.Is(err, os.ErrNotExist):
		return nil, "", err
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, problem, err
	}
	f := deviceKeyFile{Version: deviceKeyVersion, Algorithm: "ed25519", Seed: base64.StdEncoding.EncodeToString(priv.Seed()),
		PublicKey: base64.StdEncoding.EncodeToString(pub), CreatedUnix: s.now().Unix()}
	data, _ = json.Marshal(f)
	if err := writeFileAtomic(path, append(data, '\n')); err != nil {
		return nil, problem, fmt.Errorf("saving %s: %w", deviceKeyFileName, err)
	}
	return priv, problem, nil
}

// deviceIDOrThis names this machine for a problem sentence.
func (s *Store) deviceIDOrThis() string {
	if id := (&Reader{s: s}).DeviceID(); id != "" {
		return id
	}
	return "THIS-DEVICE"
}

// PublicKey is the public half of the signing key recorded in the
// directory read, nil when there is none (the daemon never published with
// it, or the file is damaged or newer).
func (r *Reader) PublicKey() ed25519.PublicKey {
	data, err := ReadStateFile(filepath.Join(r.s.dir, deviceKeyFileName))
	if err != nil {
		return nil
	}
	key, _, _ := decodeDeviceKey(data)
	if key == nil {
		return nil
	}
	return key.Public().(ed25519.PublicKey)
}

// Fingerprint names a public key for a person, as ssh does:
// "SHA256:" and the base64 of its SHA-256, unpadded.
func Fingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}
