package dnd

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// RecordFile is the name, in the state directory, of what a silenced
// server's setting was before antidrift changed it. It exists only while a
// setting is changed, so a daemon that died leaves it behind and the next
// one puts the setting back from it.
const RecordFile = "quiet.json"

// recordVersion is the format of RecordFile this build writes and reads.
const recordVersion = 1

// record is what was changed: which kind of server, and the person's value
// before (the server's own words: "true", "false", "absent").
type record struct {
	Version  int    `json:"version"`
	Kind     string `json:"kind"`
	Previous string `json:"previous"`
}

// loadRecord reads the record in dir; nil when there is none. A record
// that cannot be read as one (damaged, another version, not a regular
// file) is set aside as quiet.json.damaged-<unix> and named in problem.
func loadRecord(dir string) (rec *record, problem string) {
	path := filepath.Join(dir, RecordFile)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ""
	}
	var r record
	if err == nil {
		var st fs.FileInfo
		if st, err = f.Stat(); err == nil && !st.Mode().IsRegular() {
			err = errors.New("not a regular file")
		}
		if err == nil {
			dec := json.NewDecoder(f)
			dec.DisallowUnknownFields()
			err = dec.Decode(&r)
		}
		f.Close()
	}
	if err == nil && (r.Version != recordVersion || r.Kind == "" || r.Previous == "") {
		err = fmt.Errorf("version %d, kind %q, previous %q", r.Version, r.Kind, r.Previous)
	}
	if err == nil {
		return &r, ""
	}
	aside := fmt.Sprintf("%s.damaged-%d", path, time.Now().Unix())
	if rerr := os.Rename(path, aside); rerr != nil {
		return nil, fmt.Sprintf("%s could not be read (%v) nor set aside (%v): a notification setting antidrift changed before may not have been put back", path, err, rerr)
	}
	return nil, fmt.Sprintf("%s could not be read (%v) and was set aside as %s: a notification setting antidrift changed before may not have been put back", path, err, filepath.Base(aside))
}

// saveRecord writes rec to dir atomically (a temporary file, fsynced, then
// renamed over the old one, and the directory fsynced), 0600.
func saveRecord(dir string, rec record) error {
	rec.Version = recordVersion
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, RecordFile+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename; cleans up a failure
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, RecordFile)); err != nil {
		return err
	}
	return syncDir(dir)
}

// removeRecord deletes the record once the setting is back, durably.
func removeRecord(dir string) error {
	err := os.Remove(filepath.Join(dir, RecordFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
