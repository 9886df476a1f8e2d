package report

import (
	"bytes"
	"time"

	"github.com/antidrift/antidrift/persist"
	"github.com/antidrift/antidrift/service"
)

// DirReporter is the daemon's service.Reporter: the JSON report of its own
// state directory, read as the CLI reads it (no lock, no write), so the
// daemon's Report and `antidrift report --json` give the same document.
type DirReporter struct {
	Dir      string
	Options  Options
	DayStart time.Duration // day_starts
	// SyncDir and ThisName make the report cover every machine sharing
	// sync_dir (see BuildAll); SyncDir "" is this machine alone.
	SyncDir, ThisName string
}

var _ service.Reporter = DirReporter{}

// Report is the report of every machine, or of device alone when it is
// set (a name or device id; *service.NoSuchDevice when no machine has it).
func (d DirReporter) Report(since, until time.Time, device string) ([]byte, error) {
	r, err := BuildAll(persist.NewReader(d.Dir), Between(since, until, d.DayStart), d.Options,
		Devices{SyncDir: d.SyncDir, ThisName: d.ThisName, Only: device, Now: time.Now()})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = JSON(&b, r)
	return b.Bytes(), err
}
