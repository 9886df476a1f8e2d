package persist

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/google/uuid"
)

// deviceFileName holds this machine's device id: generated once, the first
// time the daemon opens the directory, and never changed by it after, so
// the folder it publishes into in sync_dir stays the same folder.
const deviceFileName = "device.json"

// deviceIDPattern is the one spelling of a device id: a UUID, lowercase.
// Readers of sync_dir take nothing else as a device folder's name.
var deviceIDPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// IsDeviceID reports whether s is spelled as a device id.
func IsDeviceID(s string) bool { return deviceIDPattern.MatchString(s) }

type deviceFile struct {
	Version     int    `json:"version"` // DeviceFileVersion (absent in files made before it: 1)
	DeviceID    string `json:"device_id"`
	CreatedUnix int64  `json:"created_unix"`
}

// DeviceID is this state directory's device id, created (atomically, 0600)
// when there is none. A damaged file is set aside and a new id made: the
// old folder in sync_dir then stops growing, and problem says so.
func (s *Store) DeviceID() (id, problem string, err error) {
	path := filepath.Join(s.dir, deviceFileName)
	data, err := ReadStateFile(path)
	switch {
	case err == nil:
		var d deviceFile
		if json.Unmarshal(data, &d) == nil && IsDeviceID(d.DeviceID) {
			return d.DeviceID, "", nil
		}
		moved, serr := s.setAside(path, "damaged")
		if serr != nil {
			return "", "", fmt.Errorf("%s is damaged and could not be set aside: %w", deviceFileName, serr)
		}
		problem = fmt.Sprintf("%s was damaged (set aside as %s); this machine has a new device id, so its copy in sync_dir starts a new folder and the old one no longer grows (delete the old folder once the new one is there)",
			deviceFileName, filepath.Base(moved))
	case !errors.Is(err, os.ErrNotExist):
		return "", "", err
	}
	d := deviceFile{Version: DeviceFileVersion, DeviceID: uuid.New().String(), CreatedUnix: s.now().Unix()}
	data, _ = json.Marshal(d)
	if err := writeFileAtomic(path, append(data, '\n')); err != nil {
		return "", problem, fmt.Errorf("saving %s: %w", deviceFileName, err)
	}
	return d.DeviceID, problem, nil
}

// DeviceID is the device id recorded in the directory read, "" when there
// is none (the daemon never ran with it, or the file is damaged).
func (r *Reader) DeviceID() string {
	data, err := ReadStateFile(filepath.Join(r.s.dir, deviceFileName))
	if err != nil {
		return ""
	}
	var d deviceFile
	if json.Unmarshal(data, &d) != nil || !IsDeviceID(d.DeviceID) {
		return ""
	}
	return d.DeviceID
}
