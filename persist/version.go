package persist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/antidrift/antidrift/service"
)

// Every file in the state directory, and every line of its line files,
// carries a format version (docs/files.md lists them all, with their
// history). The rule, one for all of them:
//
//   - The version is the top-level key "version" of the JSON object (the
//     file's, the line's, a pending.spare slot's), an integer. A file or
//     line without it is version 1: that is everything written before
//     versions were spelled out, back to the first release, and every
//     line format still at version 1 (audit and raw-log lines leave the
//     key out at 1, so their bytes, and the hashes over them, stay what
//     every earlier build wrote).
//   - A reader reads every version up to the one it knows. A format that
//     changes so that an older reader would misread it (a field it would
//     drop, a meaning it would get wrong) gets the next version.
//   - A version higher than this build knows was written by a later
//     antidrift. The daemon refuses to start (Open returns a
//     *NewerFormatError, before it changes anything: no mode tightened, no
//     link or torn line set aside, no log pruned), and says which file and
//     which versions, so a downgrade can never damage what a later version
//     wrote.
//   - Moving a file to a new version in place is done by migrateFile: the
//     new bytes are durable in a temp file, the old file is kept beside it
//     as <name>.v<old>-<unix>, and only then is the new one renamed into
//     place.
//
// A new file or line format adds one entry to versionedFiles (and its
// reader calls checkVersion on what it decodes).

// The versions this build reads and writes.
const (
	// StateFileVersion is state.json's; it is service.SnapshotVersion.
	StateFileVersion = service.SnapshotVersion
	// AuditLineVersion is each line of audit.jsonl's, 2 for a summary
	// with a task (service.SummaryTaskVersion), 1 (no key) otherwise (and of the chain
	// and totals copies published to sync_dir, which are audit lines).
	AuditLineVersion = service.SummaryTaskVersion
	// RawLogLineVersion is each line of sessions/<id>.jsonl's: 2 for a
	// MarkTask line (service.RawLogTaskVersion), 1 (no key) otherwise.
	RawLogLineVersion = service.RawLogTaskVersion
	// SpareSlotVersion is each pending.spare slot's.
	SpareSlotVersion = 1
	// DeviceFileVersion is device.json's.
	DeviceFileVersion = 1
	// SeenFileVersion is devices-seen.json's.
	SeenFileVersion = 1
)

// NewerFormatError says that a file (or a line of it) was written by a
// later antidrift: its version is higher than this build knows. Nothing
// was changed.
type NewerFormatError struct {
	File  string // relative to the state directory
	Line  int    // 1-based line of a line file; 0 for a whole file
	Got   int    // the version found
	Known int    // the highest this build reads
}

// ErrNewerFormat matches every *NewerFormatError with errors.Is.
var ErrNewerFormat = errors.New("written by a later version of antidrift")

func (e *NewerFormatError) Error() string {
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("line %d of %s", e.Line, e.File)
	}
	return fmt.Sprintf("%s has format version %d, but this antidrift reads only up to version %d: it was written by a later version of antidrift. "+
		"Nothing in the state directory was changed; run that later version again (or a newer one) to use it", where, e.Got, e.Known)
}

// Is makes errors.Is(err, ErrNewerFormat) true.
func (e *NewerFormatError) Is(target error) bool { return target == ErrNewerFormat }

// checkVersion is the one comparison: got is a version read (0: the key
// was absent, which is version 1), known the highest this build reads.
func checkVersion(file string, line, got, known int) error {
	if got > known {
		return &NewerFormatError{File: file, Line: line, Got: got, Known: known}
	}
	return nil
}

// versionKey is what a JSON object holding a version contains.
var versionKey = []byte(`"version"`)

// versionOf is the format version of one JSON object (a whole file, a line
// or a slot): its top-level "version", 1 when it has none. ok is false when
// data is not a JSON object with an integer (or no) version: such bytes are
// left to the file's own reader, which sets damaged files aside.
func versionOf(data []byte) (v int, ok bool) {
	if !bytes.Contains(data, versionKey) {
		// No "version" key anywhere (inside a string its quotes would be
		// escaped): version 1, without decoding a line of a long file.
		if len(bytes.TrimSpace(data)) == 0 {
			return 0, false
		}
		return 1, true
	}
	var o struct {
		Version *int `json:"version"`
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&o); err != nil {
		return 0, false
	}
	if o.Version == nil {
		return 1, true
	}
	return max(*o.Version, 1), true
}

// versionedFile is one file of the state directory whose version is
// checked before the daemon changes anything.
type versionedFile struct {
	name  string // relative to the state directory
	known int
	// lines: every complete line is an object with its own version; else
	// the whole file is one object (slots: pending.spare's slots).
	lines, slots bool
}

// versionedFiles are the files checked at Open. Raw logs
// (sessions/<id>.jsonl, RawLogLineVersion) are checked apart: see
// checkRawLogVersions.
var versionedFiles = []versionedFile{
	{name: stateFileName, known: StateFileVersion},
	{name: auditFileName, known: AuditLineVersion, lines: true},
	{name: spareFileName, known: SpareSlotVersion, slots: true},
	{name: deviceFileName, known: DeviceFileVersion},
	{name: seenFileName, known: SeenFileVersion},
	{name: deviceKeyFileName, known: deviceKeyVersion},
	{name: pinsFileName, known: pinsVersion, lines: true},
}

// refuseNewer returns a *NewerFormatError for the first file or line in the
// state directory written in a format later than this build knows. It
// only reads, never through a link, and passes over what cannot be read
// or parsed (the files' own readers report and set aside those).
func (s *Store) refuseNewer() error {
	for _, vf := range versionedFiles {
		if err := checkFileVersion(filepath.Join(s.dir, vf.name), vf); err != nil {
			return err
		}
	}
	return s.checkRawLogVersions()
}

// checkFileVersion is refuseNewer for one file.
func checkFileVersion(path string, vf versionedFile) error {
	f, err := openFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil // missing, a link, not a file: not this check's to say
	}
	defer f.Close()
	switch {
	case vf.lines:
		return checkLineVersions(f, vf.name, vf.known)
	case vf.slots:
		data, err := io.ReadAll(f)
		if err != nil {
			return nil
		}
		for start := 0; start < len(data); start += spareSlotSize {
			slot := data[start:min(start+spareSlotSize, len(data))]
			if v, ok := versionOf(slot); ok {
				if err := checkVersion(vf.name, 0, v, vf.known); err != nil {
					return err
				}
			}
		}
		return nil
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	if v, ok := versionOf(data); ok {
		return checkVersion(vf.name, 0, v, vf.known)
	}
	return nil
}

// checkLineVersions checks the version of every complete line of r (a line
// file named name). An unfinished last line was never acknowledged and is
// not checked. Only lines that hold a "version" key are decoded, and they
// are found by one search through each megabyte read, not line by line:
// the active session's log may hold a million lines, read at every start.
func checkLineVersions(r io.Reader, name string, known int) error {
	buf := make([]byte, 0, 1<<20)
	lines := 0 // complete lines before buf
	for {
		n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		end := bytes.LastIndexByte(buf, '\n') + 1 // buf[:end] is whole lines
		for off := 0; ; {
			i := bytes.Index(buf[off:end], versionKey)
			if i < 0 {
				break
			}
			at := off + i
			start := bytes.LastIndexByte(buf[:at], '\n') + 1
			stop := at + bytes.IndexByte(buf[at:end], '\n')
			if v, ok := versionOf(buf[start:stop]); ok {
				if err := checkVersion(name, lines+bytes.Count(buf[:start], newline)+1, v, known); err != nil {
					return err
				}
			}
			off = stop + 1
		}
		if err != nil {
			return nil // the end (what follows the last newline is unfinished), or unreadable: not this check's to say
		}
		lines += bytes.Count(buf[:end], newline)
		rest := copy(buf, buf[end:])
		buf = buf[:rest]
		if rest == cap(buf) {
			// One line longer than the buffer: make room for the rest of it.
			buf = append(buf, make([]byte, cap(buf))...)[:rest]
		}
	}
}

var newline = []byte{'\n'}

// checkRawLogVersions checks every line of the raw log of the session
// state.json names (it is replayed at start, and appended to), and the
// first and last line of every other raw log (they are only read by
// reports, and pruned: a later version's log is left alone by a daemon
// that refuses to start, so one line each is enough to notice it).
func (s *Store) checkRawLogVersions() error {
	active := ""
	if data, err := ReadStateFile(s.statePath()); err == nil {
		var snap struct {
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal(data, &snap) == nil && checkSessionID(snap.SessionID) == nil {
			active = snap.SessionID
		}
	}
	dir, err := openDir(s.raw.dir)
	if err != nil {
		return nil
	}
	defer dir.Close()
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		id, isLog := strings.CutSuffix(e.Name(), rawLogSuffix)
		if !isLog || !e.Type().IsRegular() {
			continue
		}
		f, err := openIn(dir, e.Name(), os.O_RDONLY, 0)
		if err != nil {
			continue
		}
		name := sessionsDirName + "/" + e.Name()
		if id == active {
			err = checkLineVersions(f, name, RawLogLineVersion)
		} else {
			err = checkEndLines(f, name, RawLogLineVersion)
		}
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// checkEndLines checks the first and the last complete line of a line
// file (line 0 in the error: the last line's number is not counted).
func checkEndLines(f *os.File, name string, known int) error {
	info, err := f.Stat()
	if err != nil || info.Size() == 0 {
		return nil
	}
	const most = 64 << 10
	head := make([]byte, min(info.Size(), most))
	if _, err := f.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		if v, ok := versionOf(head[:i]); ok {
			if err := checkVersion(name, 1, v, known); err != nil {
				return err
			}
		}
	}
	end, err := lengthThroughLastNewline(f, info.Size())
	if err != nil || end == 0 {
		return nil
	}
	start := max(end-most, 0)
	tail := make([]byte, end-start)
	if _, err := f.ReadAt(tail, start); err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	last := tail[:len(tail)-1]
	if i := bytes.LastIndexByte(last, '\n'); i >= 0 {
		last = last[i+1:]
	}
	if v, ok := versionOf(last); ok {
		return checkVersion(name, 0, v, known)
	}
	return nil
}

// migrateFile replaces path, a file of version from, with data (its next
// version) without a moment where neither is durable: data is written to a
// temp file and fsynced; the old file is linked to <path>.v<from>-<unix>
// (kept, never deleted) and that made durable; only then is the temp file
// renamed over path and the directory fsynced. A crash at any point leaves
// path holding the old bytes or the new ones, and the old bytes always
// somewhere. It returns the name the old file is kept under.
func (s *Store) migrateFile(path string, from int, data []byte) (kept string, err error) {
	tmp, err := writeDurableTemp(path, data)
	if err != nil {
		return "", err
	}
	kept, err = s.asideName(path, fmt.Sprintf("v%d", from))
	if err == nil {
		err = os.Link(path, kept)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("keeping %s before moving it to a new format: %w", filepath.Base(path), err)
	}
	if err := commitTemp(tmp, path); err != nil {
		return kept, fmt.Errorf("moving %s to a new format (the old one is kept as %s): %w", filepath.Base(path), filepath.Base(kept), err)
	}
	return kept, nil
}
